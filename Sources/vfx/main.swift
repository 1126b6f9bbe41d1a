import CFFmpeg
print("vfx")
