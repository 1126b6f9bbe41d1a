import VFXCore

/// An owned 8-bit plane (a gray buffer) for intermediate images: pyramid levels, motion-compensated
/// predictions, saved frames. Rows are padded to 64 bytes with 64 bytes of slack after the last row.
///
/// ```swift
/// let half = PlaneStorage(width: 320, height: 180)
/// halve(frame.plane(0), into: half.plane)
/// ```
public final class PlaneStorage: Sendable {
    let buffer: PixelBuffer
    /// The plane view (write only while nothing else reads it: the owner decides).
    public var plane: Plane { buffer.planes[0] }

    public init(width: Int, height: Int) {
        buffer = PixelBuffer(format: .gray8, width: max(1, width), height: max(1, height))
    }

    public var width: Int { buffer.width }
    public var height: Int { buffer.height }
}

/// Writes the 2×2 averages (rounded) of `source` into `target`, whose size must be the halved size
/// (`source.width / 2` × `source.height / 2`, an odd last row or column ignored). Single-byte planes only.
public func halve(_ source: Plane, into target: Plane) {
    precondition(target.width <= source.width / 2 && target.height <= source.height / 2, "target too large to halve into")
    for y in 0..<target.height {
        let top = source.row(2 * y), bottom = source.row(2 * y + 1), out = target.row(y)
        var x = 0
        while x + 8 <= target.width {
            let a = UnsafeRawPointer(top + 2 * x).loadUnaligned(as: SIMD16<UInt8>.self)
            let b = UnsafeRawPointer(bottom + 2 * x).loadUnaligned(as: SIMD16<UInt8>.self)
            let s = widened(a) &+ widened(b)
            let even = SIMD8<UInt16>(s[0], s[2], s[4], s[6], s[8], s[10], s[12], s[14])
            let odd = SIMD8<UInt16>(s[1], s[3], s[5], s[7], s[9], s[11], s[13], s[15])
            let mean = (even &+ odd &+ 2) &>> 2
            UnsafeMutableRawPointer(out + x).storeBytes(of: narrowed(mean), as: SIMD8<UInt8>.self)
            x += 8
        }
        while x < target.width {
            let sum = Int(top[2 * x]) + Int(top[2 * x + 1]) + Int(bottom[2 * x]) + Int(bottom[2 * x + 1])
            out[x] = UInt8((sum + 2) >> 2)
            x += 1
        }
    }
}

/// A plane and its successive halvings: level 0 is the plane itself (not copied: it must stay valid while
/// the pyramid is used), level `i` is half of level `i − 1`. Used for coarse-to-fine motion search.
///
/// ```swift
/// let pyramid = PlanePyramid(width: 1280, height: 720, count: 3)
/// pyramid.build(from: frame.plane(0))
/// let quarter = pyramid.plane(2)   // 320×180
/// ```
public final class PlanePyramid {
    /// Levels 1… (level 0 is the plane given to `build`).
    private let reduced: [PlaneStorage]
    private var base: Plane?
    public let width: Int
    public let height: Int

    /// Levels for a `width`×`height` plane: `count` levels at most, fewer when a level would be smaller than
    /// `minimumSize` in either direction.
    public init(width: Int, height: Int, count: Int, minimumSize: Int = 16) {
        self.width = width
        self.height = height
        var reduced: [PlaneStorage] = []
        var (w, h) = (width / 2, height / 2)
        while reduced.count + 1 < count && w >= minimumSize && h >= minimumSize {
            reduced.append(PlaneStorage(width: w, height: h))
            (w, h) = (w / 2, h / 2)
        }
        self.reduced = reduced
    }

    public var count: Int { reduced.count + 1 }

    /// Level `index` (0: the plane itself).
    public func plane(_ index: Int) -> Plane {
        if index == 0 {
            guard let base else { preconditionFailure("PlanePyramid used before build(from:)") }
            return base
        }
        return reduced[index - 1].plane
    }

    /// Takes `plane` as level 0 (without copying) and rebuilds the coarser levels from it.
    public func build(from plane: Plane) {
        precondition(plane.width == width && plane.height == height && plane.bytesPerPixel == 1, "plane does not fit the pyramid")
        base = plane
        for index in 1..<count { halve(self.plane(index - 1), into: reduced[index - 1].plane) }
    }
}

/// Rows of a plane kept in a strip buffer: row `y` of the plane is at `base + (y − first) · stride`. Lets a
/// pass over a strip of rows write into (or read from) a small buffer that stays in the cache.
struct StripRows {
    let base: UnsafeMutablePointer<UInt8>
    let stride: Int
    /// The plane row held in the buffer's first row.
    let first: Int

    /// The plane's own rows.
    init(_ plane: Plane) {
        self.init(plane, first: 0)
    }

    /// `buffer`'s rows holding the plane's rows from `first` on.
    init(_ buffer: Plane, first: Int) {
        base = buffer.baseAddress
        stride = buffer.bytesPerRow
        self.first = first
    }

    @inline(__always) func row(_ y: Int) -> UnsafeMutablePointer<UInt8> { base + (y - first) * stride }
}
