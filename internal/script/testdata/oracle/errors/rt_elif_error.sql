\if false
\elif 1/0
\endif
