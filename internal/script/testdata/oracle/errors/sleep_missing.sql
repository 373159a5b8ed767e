\sleep
