import Foundation
import Testing
import VFXCore
import VFXFilters
import VFXPipeline

/// docs/porting.md's Swift blocks are the code of PortingExamples.swift (so they compile), and they do what
/// the page says.
@Suite struct PortingDocTests {
    @Test func everyBlockOfThePageIsCompiledHere() throws {
        let page = try String(contentsOf: CommandLineRun.packageRoot.appendingPathComponent("docs/porting.md"), encoding: .utf8)
        let examples = try String(contentsOf: CommandLineRun.packageRoot.appendingPathComponent("Tests/vfxTests/PortingExamples.swift"),
                                  encoding: .utf8)
        var blocks: [String] = []
        var current: [Substring]?
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "```swift" { current = [] } else if line == "```", let lines = current {
                blocks.append(lines.joined(separator: "\n") + "\n")
                current = nil
            } else { current?.append(line) }
        }
        #expect(blocks.count == 5)
        var searchFrom = examples.startIndex
        for block in blocks {
            let found = examples.range(of: block, range: searchFrom..<examples.endIndex)
            #expect(found != nil, "docs/porting.md block not in PortingExamples.swift (in order):\n\(block)")
            if let found { searchFrom = found.upperBound }
        }
    }

    static func frame(_ k: Int, width: Int = 64, height: Int = 48) -> VideoFrame {
        var frame = VideoFrame(format: .i420, width: width, height: height,
                               timestamp: MediaTime(value: Int64(k), timescale: 30))
        frame.withMutablePlanes { planes in
            for (index, plane) in planes.enumerated() {
                for y in 0..<plane.height {
                    for x in 0..<plane.width { plane.row(y)[x] = UInt8(truncatingIfNeeded: 40 + x * 3 + y * 2 + index * 50 + k) }
                }
            }
        }
        return frame
    }

    static func luma(_ frame: VideoFrame) -> [[UInt8]] {
        let plane = frame.plane(0)
        return (0..<plane.height).map { y in Array(UnsafeBufferPointer(start: plane.row(y), count: plane.width)) }
    }

    /// Stream's shape: the first half of the frames get sepia (equal to the catalog's sepia run directly), the
    /// second half the darken closure (luma halved, the formula).
    @Test func streamFiltersSwitchMidCall() throws {
        let frames = (0..<8).map { Self.frame($0) }
        let sent = try runCallWithFilters(frames: frames)
        #expect(sent.count == 8)
        let sepia = FilterChain([.sepia(intensity: 1)]).makeProcessor(threads: 1)
        _ = try sepia.configure(for: FrameFormat(of: frames[0]))
        for k in 0..<4 {
            let expected = try #require(try sepia.frames(from: Self.frame(k)).first)
            #expect(Self.luma(sent[k]) == Self.luma(expected))
        }
        for k in 4..<8 {
            #expect(Self.luma(sent[k]) == Self.luma(Self.frame(k)).map { $0.map { $0 / 2 } })
        }
    }

    /// LiveKit's shape: half the frames dropped, the rest mirrored (out[y][x] = in[y][w−1−x]).
    @Test func processorDropsAndMirrors() throws {
        let processor = HalfRateMirror()
        _ = try processor.configure(for: FrameFormat(of: Self.frame(0)))
        var out: [VideoFrame] = []
        for k in 0..<6 { if let frame = try processor.process(Self.frame(k)) { out.append(frame) } }
        #expect(out.count == 3)
        for (index, frame) in out.enumerated() {
            #expect(Self.luma(frame) == Self.luma(Self.frame(index * 2)).map { Array($0.reversed()) })
        }
    }

    /// Zoom's shape: planes with wide strides in the caller's memory are edited in place to what the chain
    /// gives for the same frame; the bytes between rows stay as they were.
    @Test func preProcessorEditsCallerPlanesInPlace() throws {
        let width = 64, height = 48, strides = (80, 48, 40)
        let source = Self.frame(3)
        let y = UnsafeMutablePointer<UInt8>.allocate(capacity: strides.0 * height)
        let u = UnsafeMutablePointer<UInt8>.allocate(capacity: strides.1 * height / 2)
        let v = UnsafeMutablePointer<UInt8>.allocate(capacity: strides.2 * height / 2)
        defer { y.deallocate(); u.deallocate(); v.deallocate() }
        y.initialize(repeating: 7, count: strides.0 * height)
        u.initialize(repeating: 7, count: strides.1 * height / 2)
        v.initialize(repeating: 7, count: strides.2 * height / 2)
        for (plane, (base, stride)) in zip(source.planes, [(y, strides.0), (u, strides.1), (v, strides.2)]) {
            for row in 0..<plane.height { (base + row * stride).update(from: plane.row(row), count: plane.width) }
        }
        try ToneMapPreProcessor().onPreProcess(y: y, yStride: strides.0, u: u, uStride: strides.1, v: v, vStride: strides.2,
                                                 width: width, height: height)
        let chain = FilterChain([.sepia(intensity: 0.6), .vignette()]).makeProcessor(threads: 1)
        _ = try chain.configure(for: FrameFormat(of: source))
        let expected = try #require(try chain.frames(from: source).first)
        for (plane, (base, stride)) in zip(expected.planes, [(y, strides.0), (u, strides.1), (v, strides.2)]) {
            for row in 0..<plane.height {
                #expect(Array(UnsafeBufferPointer(start: base + row * stride, count: plane.width))
                        == Array(UnsafeBufferPointer(start: plane.row(row), count: plane.width)))
                #expect(UnsafeBufferPointer(start: base + row * stride + plane.width, count: stride - plane.width).allSatisfy { $0 == 7 })
            }
        }
    }

    /// Stream's audio shape: with 48 kHz buffers of constant 1 (480 frames each), the first `switchAt` buffers
    /// come out as 1 + (g − 1)·min(n / 4800, 1) at sample n (g = 10^(−6/20), the fade over 100 ms; the formula
    /// evaluated here, to float rounding), and from the switch on they pass unchanged.
    @Test func audioFilterSetFromTheUIAndSwitchedOff() throws {
        let buffers = (0..<20).map { _ in
            let buffer = AudioBuffer(channels: 2, capacity: 480, sampleRate: 48_000)
            buffer.frameCount = 480
            for channel in 0..<2 { buffer.channel(channel).update(repeating: 1, count: 480) }
            return buffer
        }
        try runCallAudio(buffers: buffers, switchAt: 15)
        let gain = Float(pow(10, -6.0 / 20))
        for (index, buffer) in buffers.enumerated() {
            for channel in 0..<2 {
                for n in 0..<480 {
                    let position = index * 480 + n
                    let expected: Float = index < 15 ? 1 + (gain - 1) * min(Float(position) / 4800, 1) : 1
                    #expect(abs(buffer.channel(channel)[n] - expected) < 1e-6)
                    if abs(buffer.channel(channel)[n] - expected) >= 1e-6 { return }
                }
            }
        }
    }
}
