\endpipeline now
