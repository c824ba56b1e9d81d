print("tripconv")
