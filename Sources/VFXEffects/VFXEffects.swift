import VFXFilters

/// The AI effects built on VFXVision: background blur and replacement, face stickers, face anonymizing and
/// makeup. Each is a filter in the catalog once `VFXEffects.register()` has run (the `vfx` command calls it
/// at startup), so chains, `vfx filters`, live parameter changes and the Swift API all reach them.
///
/// ```swift
/// import VFXEffects
/// VFXEffects.register()
/// let processor = try FilterChain(parsing: "background-blur:radius=20,face-sticker:sticker=glasses").makeProcessor()
/// ```
///
/// Each effect runs the analysis it needs on the frames it gets (person segmentation, face detection, the face
/// mesh), or uses the result an analysis stage attached to the frame (`AnalysisAttacher`) when there is one.
public enum VFXEffects {
    /// The effects' filter specs, in catalog order.
    public static let filters: [FilterSpec] = [
        .backgroundBlur, .backgroundImage, .backgroundVideo, .backgroundColor,
        .faceSticker, .facePixelate, .faceBlur,
        .lipstick, .skinSmooth,
    ]

    /// Adds the effects to `FilterRegistry` (harmless when called again).
    public static func register() { FilterRegistry.register(filters) }
}
