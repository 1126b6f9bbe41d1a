import Foundation
import VFXCore
@testable import VFXFilters
import VFXPipeline
import VFXTestSupport
import XCTest

/// Helpers shared by the filter tests: FFmpeg as a subprocess, raw images, chains (frames and PSNR are in
/// VFXTestSupport).
enum TestSupport {
    static let astronaut = TestMedia.path("astronaut.png")

    /// A fresh temporary folder.
    static func temporaryFolder() throws -> String {
        let path = NSTemporaryDirectory() + "vfx-filters-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Runs `ffmpeg` with `arguments` and fails the test with its message when it fails.
    static func ffmpeg(_ arguments: [String]) throws {
        let result = try TestProcess.run("/usr/bin/ffmpeg", ["-nostdin", "-hide_banner", "-v", "error", "-y"] + arguments)
        if result.status != 0 {
            throw NSError(domain: "ffmpeg", code: Int(result.status), userInfo: [NSLocalizedDescriptionKey: result.stderr])
        }
    }

    /// The image at `path` decoded by FFmpeg to raw `pixelFormat` bytes (FFmpeg's names: rgba, yuv420p).
    static func raw(_ path: String, pixelFormat: String, filter: String? = nil) throws -> [UInt8] {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let output = folder + "/out.raw"
        try ffmpeg(["-i", path] + (filter.map { ["-vf", $0] } ?? []) + ["-f", "rawvideo", "-pix_fmt", pixelFormat, output])
        return Array(try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    /// `chain` applied to `frame` by a fresh processor (one thread unless `threads` says otherwise).
    static func apply(_ chain: String, to frame: VideoFrame, threads: Int = 1) throws -> VideoFrame {
        let processor = try FilterChain(parsing: chain).makeProcessor(threads: threads)
        _ = try processor.configure(for: FrameFormat(of: frame))
        return try XCTUnwrap(processor.frames(from: frame).first)
    }

    /// The largest absolute difference, skipping every `skip`-th byte when asked.
    static func maxDifference(_ a: [UInt8], _ b: [UInt8], skipEvery skip: Int? = nil) -> Int {
        var worst = 0
        for index in a.indices where skip.map({ index % $0 != $0 - 1 }) ?? true {
            worst = max(worst, abs(Int(a[index]) - Int(b[index])))
        }
        return worst
    }
}

/// Random Y'CbCr frames of a test's size, the I420 ↔ NV12 reordering and a chain's colour transforms, for the
/// colour-kernel tests.
protocol RandomYUVFrames {
    var width: Int { get }
    var height: Int { get }
}

extension RandomYUVFrames {
    var chromaSize: (width: Int, height: Int) { ((width + 1) / 2, (height + 1) / 2) }

    /// Random Y'CbCr planes (many samples out of the R'G'B' gamut, so every clamp acts somewhere).
    func randomI420(seed: UInt64) -> [UInt8] {
        var generator = SystemRandomNumberGenerator.Seeded(state: seed)
        return (0..<(width * height + 2 * chromaSize.width * chromaSize.height)).map { _ in generator.byte() }
    }

    /// `i420` with Cb and Cr interleaved, and back.
    func nv12(_ i420: [UInt8]) -> [UInt8] {
        let (luma, quarter) = (width * height, chromaSize.width * chromaSize.height)
        return Array(i420[..<luma]) + (0..<quarter).flatMap { [i420[luma + $0], i420[luma + quarter + $0]] }
    }

    func i420(fromNV12 bytes: [UInt8]) -> [UInt8] {
        let (luma, quarter) = (width * height, chromaSize.width * chromaSize.height)
        return Array(bytes[..<luma]) + (0..<quarter).map { bytes[luma + 2 * $0] } + (0..<quarter).map { bytes[luma + 2 * $0 + 1] }
    }

    /// The colour transforms of `chain` as the compiler gets them.
    func transforms(_ chain: String, format: FrameFormat) throws -> [ColorTransform] {
        try FilterChain(parsing: chain).filters.map { description in
            let spec = try XCTUnwrap(description.spec)
            guard case .color(let transform) = try spec.makeStage(description.arguments(),
                                                                  FilterContext(format: format, slices: SliceRunner(threads: 1))) else {
                throw XCTSkip("\(description.name) is not a colour transform")
            }
            return transform
        }
    }
}
