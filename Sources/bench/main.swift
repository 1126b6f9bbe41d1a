import VFXCore
