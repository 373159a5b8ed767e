module example.com/microgo

go 1.21
