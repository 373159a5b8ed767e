\else
