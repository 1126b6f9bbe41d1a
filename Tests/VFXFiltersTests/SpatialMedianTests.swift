import Foundation
import Testing
import VFXCore
import VFXFilters
import VFXTestSupport

/// `median` against its definition (the 5th of the 9 samples around each sample, edges repeating the border,
/// each channel of each plane alone) and against FFmpeg's `median=radius=1`. A median selects one of its inputs,
/// so every comparison is exact: tolerance 0.
@Suite struct SpatialMedianTests {
    /// Reproducible bytes in 0..<`range` (a small range makes many ties among the nine).
    static func noise(_ count: Int, seed: UInt64, range: Int = 256) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(Int(state >> 33) % range)
        }
    }

    /// A frame of `format` holding noise in every plane.
    static func noisyFrame(_ format: PixelFormat, width: Int, height: Int, seed: UInt64, range: Int = 256) -> VideoFrame {
        let count = (0..<format.planeCount).reduce(0) { total, index in
            let size = format.planeSize(index, width: width, height: height)
            return total + size.width * size.height * format.bytesPerPixel(plane: index)
        }
        return RawFrames.frame(noise(count, seed: seed, range: range), format: format, width: width, height: height)
    }

    /// The definition, evaluated here: each byte of each plane becomes the middle of the sorted nine samples of its
    /// channel around it, with rows and columns clamped to the plane.
    static func referenceMedian(of frame: VideoFrame) -> [[[UInt8]]] {
        (0..<frame.format.planeCount).map { index in
            let rows = SpatialFixtures.rows(frame, index)
            let channels = frame.format.bytesPerPixel(plane: index)
            let height = rows.count, width = rows[0].count / channels
            return (0..<height).map { y in
                (0..<(width * channels)).map { i in
                    let x = i / channels, c = i % channels
                    var nine: [UInt8] = []
                    for dy in -1...1 {
                        for dx in -1...1 {
                            nine.append(rows[min(max(y + dy, 0), height - 1)][min(max(x + dx, 0), width - 1) * channels + c])
                        }
                    }
                    return nine.sorted()[4]
                }
            }
        }
    }

    /// How many bytes differ between two images, and the first place (row, byte) where they do.
    static func differences(_ a: [[UInt8]], _ b: [[UInt8]]) -> (count: Int, first: (Int, Int)?) {
        guard a.count == b.count else { return (max(a.count, b.count), nil) }
        var count = 0, first: (Int, Int)?
        for (y, (rowA, rowB)) in zip(a, b).enumerated() {
            guard rowA.count == rowB.count else { count += max(rowA.count, rowB.count); continue }
            for i in rowA.indices where rowA[i] != rowB[i] {
                count += 1
                if first == nil { first = (y, i) }
            }
        }
        return (count, first)
    }

    /// `median` on `frame` with `threads` slices equals the sorted nine's middle on every plane (tolerance 0).
    static func expectDefinition(on frame: VideoFrame, threads: Int, _ context: String) throws {
        let output = try SpatialFixtures.apply("median", to: frame, threads: threads)
        let expected = referenceMedian(of: frame)
        for index in 0..<frame.format.planeCount {
            let (count, first) = differences(SpatialFixtures.rows(output, index), expected[index])
            #expect(count == 0, "\(context): plane \(index), first at \(String(describing: first))")
        }
    }

    /// Every layout the stencil stage handles (planar and interleaved chroma, four interleaved channels with alpha
    /// filtered like the others, one plane), at sizes whose rows are shorter than one 32-byte vector, not a
    /// multiple of it, or a few vectors plus a tail, in 1–3 slices, on full-range noise and on noise of four
    /// values (many equal neighbours). Tolerance 0.
    @Test(arguments: [PixelFormat.i420, .nv12, .rgba, .bgra, .gray8])
    func equalsTheMiddleOfTheSortedNine(format: PixelFormat) throws {
        for (width, height) in [(1, 1), (2, 3), (3, 1), (1, 5), (33, 17), (70, 9), (97, 4), (130, 6)] {
            for threads in 1...3 {
                for range in [256, 4] {
                    let frame = Self.noisyFrame(format, width: width, height: height, seed: UInt64(width * 131 + height), range: range)
                    try Self.expectDefinition(on: frame, threads: threads, "\(format) \(width)×\(height), \(threads) slice(s), values 0..<\(range)")
                }
            }
        }
    }

    /// The photo (512×512, every layout): the same definition on natural content. Tolerance 0.
    @Test(arguments: [PixelFormat.i420, .nv12, .rgba, .gray8])
    func equalsTheDefinitionOnThePhoto(format: PixelFormat) throws {
        try Self.expectDefinition(on: try SpatialFixtures.photo(format), threads: 2, "\(format)")
    }

    /// FFmpeg's `median=radius=1` is the same definition (5th of the 9, clamped edges, every plane) on yuv420p, nv12,
    /// gray and gbrap. Our RGBA frame goes to FFmpeg as gbrap planes rearranged here, because FFmpeg's own RGBA →
    /// GBRAP conversion changes alpha. FFmpeg departs from the definition on frames two or three pixels wide
    /// (measured with FFmpeg 5.1), so the sizes here are wider. Tolerance 0.
    @Test(arguments: [PixelFormat.i420, .nv12, .rgba, .gray8])
    func equalsFFmpegMedian(format: PixelFormat) throws {
        for (width, height) in [(33, 17), (130, 70), (256, 31)] {
            let frame = Self.noisyFrame(format, width: width, height: height, seed: UInt64(width + 7 * height))
            let ours = RawFrames.bytes(try SpatialFixtures.apply("median", to: frame, threads: 3))
            let theirs: [UInt8]
            if format == .rgba {
                let pixels = RawFrames.bytes(frame)
                let planes = [1, 2, 0, 3].flatMap { channel in stride(from: channel, to: pixels.count, by: 4).map { pixels[$0] } }
                let result = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-f", "rawvideo", "-pix_fmt", "gbrap",
                                                                     "-s", "\(width)x\(height)", "-i", "-", "-vf", "median=radius=1",
                                                                     "-f", "rawvideo", "-pix_fmt", "gbrap", "-"], input: Data(planes))
                #expect(result.status == 0, "\(result.stderr)")
                let filtered = [UInt8](result.stdout), count = width * height
                guard filtered.count == 4 * count else { Issue.record("ffmpeg returned \(filtered.count) bytes"); return }
                theirs = (0..<(4 * count)).map { index in filtered[[2, 0, 1, 3][index % 4] * count + index / 4] }
            } else {
                let name = format == .i420 ? "yuv420p" : format == .nv12 ? "nv12" : "gray"
                theirs = RawFrames.bytes(try SpatialFixtures.ffmpeg(frame, name: name, filter: "median=radius=1"))
            }
            let (count, first) = Self.differences([ours], [theirs])
            #expect(count == 0, "\(format) \(width)×\(height): first difference at byte \(String(describing: first?.1))")
        }
    }
}
