import VFXCore
// Median: the middle of the nine values around each sample, which removes specks and keeps edges.

extension FilterSpec {
    /// 3×3 median of each channel (edges repeat the border): removes salt-and-pepper noise, keeps edges.
    /// - No parameters. Formats: all (every plane and channel; RGB alpha too, unchanged when opaque).
    ///
    /// Chain: `median` · Swift: `FilterDescription.median`
    public static let median = FilterSpec(
        name: "median", family: .blur, summary: "3×3 median of each channel: removes specks, keeps edges.", coreImage: "CIMedianFilter",
        parameters: [], example: "median", swift: "FilterDescription.median",
        ffmpeg: { _ in "median=radius=1" }
    ) { _, context in
        .processor(StencilProcessor(.median, slices: context.slices))
    }
}

extension FilterDescription {
    public static let median = FilterDescription(builtIn: "median", [:])
}

/// The exact 3×3 median of one plane of bytes (edges repeat the border), out of place, in row slices.
///
/// For each output row the three source rows around it are sorted column by column once (`lowest`, `middle`,
/// `highest` of the three samples above one another), into scratch rows padded by one repeated pixel on each
/// side. The median of the nine is then the middle of three: the largest of the three neighbouring `lowest`,
/// the middle of the three `middle` and the smallest of the three `highest`. Every step is a byte minimum or
/// maximum: 6 for the column sort and 12 for the rest, per sample, on 32 samples at a time (`Lanes16`'s byte
/// operations: `vpminub`, `vpmaxub` with AVX2), the last samples of a row one by one. Neighbours are
/// `channels` bytes apart, so interleaved channels (NV12 chroma, RGBA with its alpha) are each filtered alone.
///
/// ```swift
/// let median = PlaneMedian(width: 1920, height: 1080, channels: 1, slices: 2)
/// median.run(source: input, target: output)
/// ```
final class PlaneMedian: @unchecked Sendable {
    // Sendable: each slice uses only its own three scratch rows; `run` is called by one thread at a time.
    let width: Int, height: Int, channels: Int, slices: Int
    private let samples: Int
    private let rowStride: Int
    private let scratch: UnsafeMutablePointer<UInt8>

    init(width: Int, height: Int, channels: Int, slices: Int) {
        self.width = width
        self.height = height
        self.channels = channels
        self.slices = max(1, slices)
        samples = width * channels
        rowStride = (samples + 2 * channels + 63) / 64 * 64
        scratch = UnsafeMutableRawPointer.allocate(byteCount: rowStride * 3 * self.slices, alignment: 64)
            .bindMemory(to: UInt8.self, capacity: rowStride * 3 * self.slices)
    }

    deinit { scratch.deallocate() }

    func run(source: Plane, target: Plane) {
        SliceRunner(threads: slices).forEachSlice(of: height) { range, slice in
            self.runRows(range, slice: slice, source: source, target: target)
        }
    }

    private func runRows(_ range: Range<Int>, slice: Int, source: Plane, target: Plane) {
        let c = channels
        let lowest = scratch + slice * 3 * rowStride, middle = lowest + rowStride, highest = middle + rowStride
        for y in range {
            Self.sortColumns(source.row(max(y - 1, 0)), source.row(y), source.row(min(y + 1, height - 1)),
                             lowest: lowest + c, middle: middle + c, highest: highest + c, count: samples)
            for k in 0..<c {
                (lowest[k], middle[k], highest[k]) = (lowest[c + k], middle[c + k], highest[c + k])
                let last = samples + k
                (lowest[c + last], middle[c + last], highest[c + last]) = (lowest[last], middle[last], highest[last])
            }
            Self.mergeColumns(lowest: lowest + c, middle: middle + c, highest: highest + c, step: c,
                              into: target.row(y), count: samples)
        }
    }

    /// The three samples `a[i]`, `b[i]`, `c[i]` in order, for i in 0..<count.
    private static func sortColumns(_ a: UnsafeMutablePointer<UInt8>, _ b: UnsafeMutablePointer<UInt8>, _ c: UnsafeMutablePointer<UInt8>,
                                    lowest: UnsafeMutablePointer<UInt8>, middle: UnsafeMutablePointer<UInt8>,
                                    highest: UnsafeMutablePointer<UInt8>, count: Int) {
        var i = 0
        while i + 32 <= count {
            let x = Lanes16.load(a + i), y = Lanes16.load(b + i), z = Lanes16.load(c + i)
            let low = Lanes16.minimumBytes(x, y), high = Lanes16.maximumBytes(x, y)
            Lanes16.store(Lanes16.minimumBytes(low, z), to: lowest + i)
            Lanes16.store(Lanes16.maximumBytes(low, Lanes16.minimumBytes(high, z)), to: middle + i)
            Lanes16.store(Lanes16.maximumBytes(high, z), to: highest + i)
            i += 32
        }
        while i < count {
            let x = a[i], y = b[i], z = c[i]
            let low = min(x, y), high = max(x, y)
            lowest[i] = min(low, z)
            middle[i] = max(low, min(high, z))
            highest[i] = max(high, z)
            i += 1
        }
    }

    /// `output[i]` = the middle of (largest of `lowest[i - step]`, `lowest[i]`, `lowest[i + step]`; middle of the same
    /// three of `middle`; smallest of the same three of `highest`), for i in 0..<count: the median of the nine samples
    /// whose column sorts these are. Reads `step` samples before and after each scratch row.
    private static func mergeColumns(lowest: UnsafeMutablePointer<UInt8>, middle: UnsafeMutablePointer<UInt8>,
                                     highest: UnsafeMutablePointer<UInt8>, step: Int,
                                     into output: UnsafeMutablePointer<UInt8>, count: Int) {
        var i = 0
        while i + 32 <= count {
            let low = Lanes16.maximumBytes(Lanes16.maximumBytes(Lanes16.load(lowest + i - step), Lanes16.load(lowest + i)),
                                           Lanes16.load(lowest + i + step))
            let high = Lanes16.minimumBytes(Lanes16.minimumBytes(Lanes16.load(highest + i - step), Lanes16.load(highest + i)),
                                            Lanes16.load(highest + i + step))
            let mid = middleOfThree(Lanes16.load(middle + i - step), Lanes16.load(middle + i), Lanes16.load(middle + i + step))
            Lanes16.store(middleOfThree(low, mid, high), to: output + i)
            i += 32
        }
        while i < count {
            let low = max(max(lowest[i - step], lowest[i]), lowest[i + step])
            let high = min(min(highest[i - step], highest[i]), highest[i + step])
            output[i] = middleOfThree(low, middleOfThree(middle[i - step], middle[i], middle[i + step]), high)
            i += 1
        }
    }

    /// The middle one of three values.
    @inline(__always) private static func middleOfThree(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 {
        max(min(a, b), min(max(a, b), c))
    }

    /// The middle one of three, for each of 32 bytes.
    @inline(__always) private static func middleOfThree(_ a: Lanes16.Vector, _ b: Lanes16.Vector, _ c: Lanes16.Vector) -> Lanes16.Vector {
        Lanes16.maximumBytes(Lanes16.minimumBytes(a, b), Lanes16.minimumBytes(Lanes16.maximumBytes(a, b), c))
    }
}
