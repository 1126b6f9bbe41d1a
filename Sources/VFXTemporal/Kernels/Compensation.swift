import VFXCore

/// Copies each block of `source`, displaced by its motion vector, into `target` (same size as `source`):
/// the motion-compensated prediction of a block field. `divisor` maps the field to a subsampled plane
/// (2 for 4:2:0 chroma: blocks and vectors halved, vectors rounded toward −∞). Displaced blocks are
/// clamped to lie inside the plane.
///
/// ```swift
/// compensate(previous.plane(0), into: prediction.plane, field: field)
/// compensate(previous.plane(1), into: predictionU.plane, field: field, divisor: 2)
/// ```
public func compensate(_ source: Plane, into target: Plane, field: MotionField, divisor: Int = 1) {
    precondition(source.bytesPerPixel == 1 && target.width == source.width && target.height == source.height,
                 "compensation needs single-byte planes of one size")
    let size = min(field.blockSize / divisor, source.width, source.height)
    guard size > 0 else { return }
    let columns = (source.width + size - 1) / size, rows = (source.height + size - 1) / size
    for row in 0..<rows {
        let oy = min(row * size, source.height - size)
        for column in 0..<columns {
            let ox = min(column * size, source.width - size)
            let v = field[min(column, field.columns - 1), min(row, field.rows - 1)]
            let dx = divisor == 1 ? v.x : v.x >> 1, dy = divisor == 1 ? v.y : v.y >> 1
            let sx = max(0, min(source.width - size, ox + dx)), sy = max(0, min(source.height - size, oy + dy))
            for y in 0..<size {
                target.row(oy + y).advanced(by: ox).update(from: source.row(sy + y).advanced(by: sx), count: size)
            }
        }
    }
}
