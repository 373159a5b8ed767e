\shell
