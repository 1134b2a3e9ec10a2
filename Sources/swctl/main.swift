print("swctl")
