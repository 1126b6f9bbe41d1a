// The Swift blocks of docs/porting.md, verbatim and in order (PortingDocTests checks it): they compile with
// the test target, and PortingDocTests runs them.

import Foundation
import VFXCore
import VFXFilters
import VFXPipeline

/// Darkens the picture: a closure filter working on the luma plane in place.
func makeDarkenFilter() -> VideoFilter {
    VideoFilter(id: "darken", name: "Darken") { input in
        var frame = input.originalFrame
        frame.withMutablePlanes { planes in
            let luma = planes[0]
            for y in 0..<luma.height {
                let row = luma.row(y)
                for x in 0..<luma.width { row[x] = row[x] / 2 }
            }
        }
        return frame
    }
}

/// Sepia, as Stream's sample does with CISepiaTone: here the catalog's `sepia` compiled for the frames.
func makeSepiaFilter() -> VideoFilter {
    VideoFilter(id: "sepia", name: "Sepia", stage: { FilterChain([.sepia(intensity: 1)]).makeProcessor(threads: 1) })
}

/// The call's side: the UI sets the filter from its own thread; the capture callback runs each frame.
func runCallWithFilters(frames: [VideoFrame]) throws -> [VideoFrame] {
    let session = CallSession()
    session.setVideoFilter(makeSepiaFilter())
    var sent: [VideoFrame] = []
    for (index, frame) in frames.enumerated() {
        if index == frames.count / 2 { session.setVideoFilter(makeDarkenFilter()) }
        if let output = try session.process(frame) { sent.append(output) }
    }
    return sent
}

/// Sends every other frame (halves the frame rate), mirrored left-right.
final class HalfRateMirror: VideoProcessor {
    private let mirror = FilterChain([.flip(.horizontal)]).makeProcessor(threads: 1)
    private var count = 0

    func configure(for input: FrameFormat) throws -> FrameFormat { try mirror.configure(for: input) }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        count += 1
        guard count % 2 == 1 else { return nil }
        return try mirror.frames(from: frame).first
    }

    func release() { mirror.release() }
}

/// What the SDK's callback does with the planes it is handed.
final class ToneMapPreProcessor {
    private let stage = InPlaceProcessor(FilterChain([.sepia(intensity: 0.6), .vignette()]).makeProcessor(threads: 1))

    func onPreProcess(y: UnsafeMutablePointer<UInt8>, yStride: Int, u: UnsafeMutablePointer<UInt8>, uStride: Int,
                      v: UnsafeMutablePointer<UInt8>, vStride: Int, width: Int, height: Int) throws {
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        try stage.process(planes: [
            Plane(baseAddress: y, bytesPerRow: yStride, width: width, height: height, bytesPerPixel: 1),
            Plane(baseAddress: u, bytesPerRow: uStride, width: chromaWidth, height: chromaHeight, bytesPerPixel: 1),
            Plane(baseAddress: v, bytesPerRow: vStride, width: chromaWidth, height: chromaHeight, bytesPerPixel: 1),
        ], format: .i420, width: width, height: height)
    }
}

/// A gain that fades in over its first 100 ms, so switching it on makes no click.
final class FadeInGain: AudioFilter {
    let id = "fade-in-gain"
    let latency = 0
    private let gain: Float
    private var position = 0
    private var fadeLength = 1

    init(decibels: Float) { gain = pow(10, decibels / 20) }

    func initialize(sampleRate: Int, channels: Int) throws {
        position = 0
        fadeLength = max(1, sampleRate / 10)
    }

    func process(_ buffer: AudioBuffer) {
        for index in 0..<buffer.frameCount {
            let fade = min(Float(position) / Float(fadeLength), 1)
            position += 1
            for channel in 0..<buffer.channelCount { buffer.channel(channel)[index] *= 1 + (gain - 1) * fade }
        }
    }
}

/// The call's side: each microphone buffer goes through the session in place; the UI switches the filter
/// off from its own thread after `switchAt` buffers.
func runCallAudio(buffers: [AudioBuffer], switchAt: Int) throws {
    let session = CallSession()
    session.setAudioFilter(FadeInGain(decibels: -6))
    for (index, buffer) in buffers.enumerated() {
        if index == switchAt { session.setAudioFilter(nil) }
        try session.processAudio(buffer)
    }
}
