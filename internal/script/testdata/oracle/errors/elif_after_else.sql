\if true
\else
\elif false
\endif
