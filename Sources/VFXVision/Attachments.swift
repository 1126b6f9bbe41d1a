import VFXCore

// The vision results ride on frames as typed attachments, each carrying the timestamp of the frame it was
// computed from:
//
//     frame.attachments[FaceObservations.self] = FaceObservations(faces: faces, timestamp: frame.timestamp)
//     let mask = frame.attachments[PersonMask.self]
extension FaceObservations: FrameAttachment {}
extension FaceMeshes: FrameAttachment {}
extension PersonMask: FrameAttachment {}
