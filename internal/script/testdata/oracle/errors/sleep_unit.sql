\sleep 10 minutes
