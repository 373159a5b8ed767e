\if true
\else
\else
\endif
