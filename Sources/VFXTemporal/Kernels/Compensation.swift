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
            copyBlock(from: source.row(sy) + sx, source.bytesPerRow, to: target.row(oy) + ox, target.bytesPerRow, size: size)
        }
    }
}

/// Copies a `size`×`size` block (8 and 4 as single vector moves per row).
@inline(__always)
func copyBlock(from source: UnsafeMutablePointer<UInt8>, _ sourceStride: Int, to target: UnsafeMutablePointer<UInt8>,
               _ targetStride: Int, size: Int) {
    var s = source, t = target
    for _ in 0..<size {
        switch size {
        case 8: UnsafeMutableRawPointer(t).storeBytes(of: UnsafeRawPointer(s).loadUnaligned(as: UInt64.self), as: UInt64.self)
        case 4: UnsafeMutableRawPointer(t).storeBytes(of: UnsafeRawPointer(s).loadUnaligned(as: UInt32.self), as: UInt32.self)
        default: t.update(from: s, count: size)
        }
        s += sourceStride
        t += targetStride
    }
}
