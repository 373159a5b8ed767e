\shell false
