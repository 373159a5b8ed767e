\if true
\else junk
\endif
