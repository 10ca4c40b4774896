print("config ok")
