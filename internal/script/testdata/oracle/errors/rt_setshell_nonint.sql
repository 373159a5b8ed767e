\setshell x echo hello
