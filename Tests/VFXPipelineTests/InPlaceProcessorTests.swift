import Foundation
import Testing
import VFXCore
import VFXPipeline

/// Writes 255 − value into every byte of every plane, in place when it can.
final class NegateProcessor: VideoProcessor {
    /// Where plane 0 of each frame it wrote lay.
    var wroteAt: [UnsafeMutablePointer<UInt8>] = []
    func configure(for input: FrameFormat) throws -> FrameFormat { input }
    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        var frame = frame
        frame.withMutablePlanes { planes in
            for plane in planes {
                for y in 0..<plane.height {
                    let row = plane.row(y)
                    for x in 0..<plane.width * plane.bytesPerPixel { row[x] = 255 - row[x] }
                }
            }
        }
        wroteAt.append(frame.plane(0).baseAddress)
        return frame
    }
}

/// I420 planes in caller-owned memory with odd strides (as a call SDK hands them over), filled with a pattern.
struct CallerPlanes {
    let width = 37, height = 21
    let strides = [41, 23, 29]
    var memory: [UnsafeMutablePointer<UInt8>] = []
    var planes: [Plane] = []

    init(aligned: Bool = false) {
        let sizes = [(37, 21), (19, 11), (19, 11)]
        for (index, (w, h)) in sizes.enumerated() {
            let stride = aligned ? 64 : strides[index]
            let pointer = UnsafeMutableRawPointer.allocate(byteCount: stride * h + 64, alignment: 64)
                .bindMemory(to: UInt8.self, capacity: stride * h + 64)
            for i in 0..<(stride * h + 64) { pointer[i] = UInt8(truncatingIfNeeded: i * 7 + index * 31) }
            memory.append(pointer)
            planes.append(Plane(baseAddress: pointer, bytesPerRow: stride, width: w, height: h, bytesPerPixel: 1))
        }
    }

    func bytes() -> [[UInt8]] {
        planes.map { plane in (0..<plane.height).flatMap { y in Array(UnsafeBufferPointer(start: plane.row(y), count: plane.width)) } }
    }

    /// The bytes between rows (past each row's end), which must never be touched.
    func padding() -> [[UInt8]] {
        planes.map { plane in
            (0..<plane.height).flatMap { y in
                Array(UnsafeBufferPointer(start: plane.row(y) + plane.width, count: plane.bytesPerRow - plane.width))
            }
        }
    }

    func free() { for pointer in memory { pointer.deallocate() } }
}

@Suite struct InPlaceProcessorTests {
    @Test func editsCallerPlanesWithTheirStridesAndNothingElse() throws {
        let caller = CallerPlanes()
        defer { caller.free() }
        let before = caller.bytes(), paddingBefore = caller.padding()
        let runner = InPlaceProcessor(NegateProcessor())
        try runner.process(planes: caller.planes, format: .i420, width: caller.width, height: caller.height)
        #expect(caller.bytes() == before.map { $0.map { 255 - $0 } })
        #expect(caller.padding() == paddingBefore)
        #expect(runner.copyBufferCount == 1)   // odd strides: copied into one pool buffer, reused after
        try runner.process(planes: caller.planes, format: .i420, width: caller.width, height: caller.height)
        #expect(caller.bytes() == before && runner.copyBufferCount == 1)
    }

    @Test func planesWithTheKernelLayoutAreEditedWithoutACopy() throws {
        let caller = CallerPlanes(aligned: true)
        defer { caller.free() }
        let before = caller.bytes()
        let negate = NegateProcessor()
        let runner = InPlaceProcessor(negate)
        try runner.process(planes: caller.planes, format: .i420, width: caller.width, height: caller.height,
                           hasKernelLayout: true)
        #expect(caller.bytes() == before.map { $0.map { 255 - $0 } })
        #expect(runner.copyBufferCount == 0)
        #expect(negate.wroteAt == [caller.planes[0].baseAddress])   // written straight into the caller's memory
    }

    @Test func planesThatDoNotMatchTheFormatAreRefused() {
        let caller = CallerPlanes()
        defer { caller.free() }
        let runner = InPlaceProcessor(NegateProcessor())
        #expect(throws: PixelBufferError.self) {
            try runner.process(planes: Array(caller.planes.prefix(2)), format: .i420, width: caller.width, height: caller.height)
        }
        #expect(throws: PixelBufferError.self) {
            try runner.process(planes: caller.planes, format: .i420, width: caller.width + 2, height: caller.height)
        }
    }

    @Test func aStageThatEmitsTwoFramesCannotRunInPlace() {
        let caller = CallerPlanes()
        defer { caller.free() }
        #expect(throws: InPlaceError.severalFrames) {
            try InPlaceProcessor(DoublingProcessor()).process(planes: caller.planes, format: .i420, width: caller.width,
                                                               height: caller.height)
        }
    }
}
