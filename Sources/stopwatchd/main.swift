print("stopwatchd")
