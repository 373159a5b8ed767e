\setshell x echo :nosuch
