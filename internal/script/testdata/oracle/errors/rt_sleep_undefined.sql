\sleep :nosuch ms
