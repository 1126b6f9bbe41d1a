// VFXMedia
