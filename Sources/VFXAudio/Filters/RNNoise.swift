import VFXCore
import VFXPipeline
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The RNNoise engine of `noise-suppression`: Xiph's recurrent-network noise suppressor (BSD-3-Clause,
/// with its built-in weights). VideoFX does not ship the library: `scripts/setup.sh` takes `librnnoise.so`
/// from the PyPI wheel `pyrnnoise==0.4.5` into `.build/rnnoise/`; it is looked for at
/// `$VFX_RNNOISE_LIBRARY`, then `.build/rnnoise/librnnoise.so` under the working folder and beside the
/// executable's build folder, then by the system's loader.
///
/// By default (`runner: .videoFX`) VideoFX runs each 10 ms frame itself, step for step as the library's
/// `rnnoise_process_frame` does, with a few of the library's exported pieces: its high-pass, the pitch
/// buffer's low-pass, the pitch-doubling check and the pitch filter (`RNNoiseLibrary.FrameFunctions`).
/// VideoFX's own are the FFTs (`RealFFT960`), the features and pitch search (`RNNoiseFeatures`), RNNoise's
/// network on the library's own 8-bit weights (`RNNoiseNetwork`, AVX2), the gains, their smoothing and the
/// overlap-add synthesis. The library's build runs its network in portable SSE2 code, which takes most of
/// its time. For the same features the network's gains are the library's exactly; the FFTs round
/// differently, so the output differs from the library's by 50–66 dB under it on speech with noise
/// (`RNNoiseNetworkTests`). `runner: .library(weights)` runs the library's `rnnoise_process_frame` instead
/// (the reference in tests and benchmarks, and the path taken if a library's model has another shape).
///
/// RNNoise takes 480-frame blocks at 48 kHz in the 16-bit range; its output lags its input by 960 frames
/// (measured by cross-correlation on speech), and the block buffering here adds 480: the latency is 1440
/// frames (30 ms). `level` keeps the input, delayed alike, at −level dB under the output, which caps the
/// reduction at about `level`.
final class RNNoiseSuppressor: AudioFilter {
    /// Which of the library's two copies of its weights its own network runs on: the float copies (what
    /// the library picks when it has both) or only the 8-bit ones (a model rebuilt without the float copies).
    enum Weights { case quantized, float }
    /// Who runs the frame: VideoFX around the library's features, or the library alone.
    enum Runner: Equatable { case videoFX, library(Weights) }

    let level: Float
    let runner: Runner
    private var states: [OpaquePointer] = []
    private var channels: [RNNoiseChannel] = []
    private var scratch: RNNoiseChannel.Scratch?
    private var input: SampleStorage<Float>?
    private var output: SampleStorage<Float>?
    private var dry: SampleStorage<Float>?
    private var dryPosition = 0
    private var filled = 0
    private var floorGain: Float = 0
    static let frame = 480

    init(level: Float, runner: Runner = .videoFX) {
        self.level = level
        self.runner = runner
    }

    var id: String { "noise-suppression:level=\(level):engine=rnnoise" }
    var latency: Int { 3 * RNNoiseSuppressor.frame }
    /// True once initialized with the `.videoFX` runner and the library's pieces and model were found.
    var runsOwnNetwork: Bool { !channels.isEmpty }
    var preferredBlockSize: Int? { RNNoiseSuppressor.frame }

    func sampleRate(near rate: Int) -> Int { 48_000 }

    func initialize(sampleRate: Int, channels count: Int) throws {
        release()
        guard sampleRate == 48_000 else { throw AudioFilterError.unsupportedRate(filter: id, rate: sampleRate) }
        guard let library = RNNoiseLibrary.shared else { throw AudioFilterError.engineUnavailable(filter: "noise-suppression", reason: RNNoiseLibrary.missing) }
        if runner == .videoFX, let own = library.frame {
            channels = (0..<count).map { _ in RNNoiseChannel(functions: own.functions, model: own.model) }
            scratch = RNNoiseChannel.Scratch()
        } else {
            for _ in 0..<count {
                guard let state = library.create(runner == .library(.float) ? nil : library.quantized?.model) else {
                    throw AudioFilterError.engineUnavailable(filter: "noise-suppression", reason: "rnnoise_create failed")
                }
                states.append(state)
            }
        }
        let frame = RNNoiseSuppressor.frame
        input = SampleStorage(count: frame * count)
        output = SampleStorage(count: frame * count)
        dry = SampleStorage(count: latency * count)   // the input, `latency` frames back, per channel
        dryPosition = 0
        filled = 0
        floorGain = powf(10, -level / 20)
    }

    func process(_ buffer: AudioBuffer) {
        guard let library = RNNoiseLibrary.shared, let input, let output, let dry else { return }
        let frame = RNNoiseSuppressor.frame
        let count = min(buffer.channelCount, max(states.count, channels.count))
        let delay = latency
        var position = 0
        while position < buffer.frameCount {
            let span = min(frame - filled, buffer.frameCount - position)
            for channel in 0..<count {
                let samples = buffer.channel(channel) + position
                let pending = input.pointer + channel * frame + filled
                let ready = output.pointer + channel * frame + filled
                let delayed = dry.pointer + channel * delay
                var cursor = dryPosition
                for index in 0..<span {
                    let sample = samples[index]
                    pending[index] = sample * 32768
                    // Output: the frame RNNoise finished last time, plus the input from `latency` frames
                    // back (delayed as RNNoise's output is) at the floor level.
                    samples[index] = ready[index] + floorGain * delayed[cursor]
                    delayed[cursor] = sample
                    cursor += 1
                    if cursor == delay { cursor = 0 }
                }
            }
            dryPosition = (dryPosition + span) % delay
            filled += span
            position += span
            if filled == frame {
                for channel in 0..<count {
                    let result = output.pointer + channel * frame
                    if let scratch {
                        channels[channel].process(result, input.pointer + channel * frame, scratch: scratch)
                    } else {
                        _ = library.process(states[channel], result, input.pointer + channel * frame)
                    }
                    for index in 0..<frame { result[index] *= 1 / 32768 }
                }
                filled = 0
            }
        }
    }

    func release() {
        if let library = RNNoiseLibrary.shared { for state in states { library.destroy(state) } }
        states = []
        channels = []
        scratch = nil
        input = nil
        output = nil
        dry = nil
    }

    deinit { release() }
}

/// One channel of the `.videoFX` runner: its features (with their analysis and pitch memory), its network,
/// and what `rnnoise_process_frame` keeps between frames (high-pass memory, last gains, the synthesis
/// overlap, and the previous frame's spectra and band energies, which the gains apply to).
final class RNNoiseChannel {
    static let frame = 480, window = 960, bins = 481, bands = 32

    /// Per-frame buffers shared by the channels of one filter (they run one after the other).
    final class Scratch {
        let highPassed = SampleStorage<Float>(count: RNNoiseChannel.frame)
        let spectrum = SampleStorage<Float>(count: 2 * RNNoiseChannel.bins)        // X, interleaved complex
        let pitchSpectrum = SampleStorage<Float>(count: 2 * RNNoiseChannel.bins)   // P
        let energies = SampleStorage<Float>(count: 3 * RNNoiseChannel.bands)       // Ex, Ep, Exp
        let features = SampleStorage<Float>(count: RNNoiseModel.features)
        let gains = SampleStorage<Float>(count: RNNoiseChannel.bands)
        let binGains = SampleStorage<Float>(count: RNNoiseChannel.bins)
        let time = SampleStorage<Float>(count: RNNoiseChannel.window)
        /// The library's high-pass: b = (−2, 1), a = (−1.99599, 0.996).
        let highPassCoefficients: SampleStorage<Float> = {
            let storage = SampleStorage<Float>(count: 4)
            storage[0] = -2
            storage[1] = 1
            storage[2] = -1.995_99
            storage[3] = 0.996
            return storage
        }()
    }

    let functions: RNNoiseLibrary.FrameFunctions
    let features: RNNoiseFeatures
    let network: RNNoiseNetwork
    private let highPassMemory = SampleStorage<Float>(count: 2)
    private let lastGains = SampleStorage<Float>(count: RNNoiseChannel.bands)
    private let synthesis = SampleStorage<Float>(count: RNNoiseChannel.frame)
    private let delayedSpectrum = SampleStorage<Float>(count: 2 * RNNoiseChannel.bins)
    private let delayedPitchSpectrum = SampleStorage<Float>(count: 2 * RNNoiseChannel.bins)
    private let delayedEnergies = SampleStorage<Float>(count: 3 * RNNoiseChannel.bands)

    init(functions: RNNoiseLibrary.FrameFunctions, model: RNNoiseModel) {
        self.functions = functions
        features = RNNoiseFeatures(functions: functions)
        network = RNNoiseNetwork(model: model)
    }

    /// One 480-frame block in the 16-bit range, as `rnnoise_process_frame(state, output, input)`.
    func process(_ output: UnsafeMutablePointer<Float>, _ input: UnsafePointer<Float>, scratch: Scratch) {
        let bands = Self.bands, bins = Self.bins
        let x = scratch.highPassed.pointer, spectrum = scratch.spectrum.pointer, pitch = scratch.pitchSpectrum.pointer
        let ex = scratch.energies.pointer, ep = ex + bands, exp = ex + 2 * bands
        let coefficients = scratch.highPassCoefficients.pointer
        functions.biquad(x, highPassMemory.pointer, input, coefficients, coefficients + 2, Int32(Self.frame))
        let silent = features.compute(spectrum: spectrum, pitchSpectrum: pitch, energies: ex, pitchEnergies: ep, correlation: exp,
                                      features: scratch.features.pointer, input: x)
        let delayedX = delayedSpectrum.pointer, delayedEx = delayedEnergies.pointer
        if !silent {
            let g = scratch.gains.pointer
            network.run(features: scratch.features.pointer, gains: g)
            functions.pitchFilter(delayedX, delayedPitchSpectrum.pointer, delayedEx, delayedEx + bands, delayedEx + 2 * bands, g)
            let last = lastGains.pointer
            for band in 0..<bands {
                // The gain falls by at most 0.6 a frame; the floor for the next frame follows the change in
                // energy between the frame the gains apply to and this one (the library's rule, in double).
                g[band] = max(g[band], 0.6 * last[band])
                last[band] = Float(min(1, Double(g[band]) * (Double(delayedEx[band]) + 1e-3) / (Double(ex[band]) + 1e-3)))
            }
            let binGains = scratch.binGains.pointer
            interpolate(g, into: binGains)
            for bin in 0..<bins {
                delayedX[2 * bin] *= binGains[bin]
                delayedX[2 * bin + 1] *= binGains[bin]
            }
        }
        synthesize(delayedX, into: output, scratch: scratch)
        delayedX.update(from: spectrum, count: 2 * bins)
        delayedPitchSpectrum.pointer.update(from: pitch, count: 2 * bins)
        delayedEx.update(from: ex, count: 3 * bands)
    }

    /// Band gains to bin gains: linear between band centres, flat at both ends, zero above 20 kHz.
    private func interpolate(_ gains: UnsafePointer<Float>, into binGains: UnsafeMutablePointer<Float>) {
        let edges = functions.bandEdges
        for band in 1..<Self.bands {
            let start = Int(edges[band]), size = Int(edges[band + 1]) - start
            for offset in 0..<size {
                let fraction = Float(offset) / Float(size)
                binGains[start + offset] = (1 - fraction) * gains[band - 1] + fraction * gains[band]
            }
        }
        for bin in 0..<Int(edges[1]) { binGains[bin] = gains[0] }
        let top = Int(edges[Self.bands + 1])
        for bin in Int(edges[Self.bands])..<top { binGains[bin] = gains[Self.bands - 1] }
        (binGains + top).update(repeating: 0, count: Self.bins - top)
    }

    /// The inverse FFT of the Hermitian spectrum, the synthesis window, and overlap-add with the previous
    /// frame's second half.
    private func synthesize(_ spectrum: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>, scratch: Scratch) {
        let n = Self.window, time = scratch.time.pointer
        features.fft.inverse(spectrum, into: time)
        let window = functions.window
        for index in 0..<Self.frame {
            time[index] *= window[index]
            time[n - 1 - index] *= window[index]
        }
        let overlap = synthesis.pointer
        for index in 0..<Self.frame { output[index] = time[index] + overlap[index] }
        overlap.update(from: time + Self.frame, count: Self.frame)
    }
}

/// The functions of `librnnoise.so`, resolved once per process (the library stays loaded): the three of
/// its public API, the model with 8-bit weights made from its weight list, and the pieces of a frame the
/// `.videoFX` runner calls (with RNNoise's network built on the same weight list).
struct RNNoiseLibrary: Sendable {
    typealias Create = @convention(c) (OpaquePointer?) -> OpaquePointer?
    typealias Destroy = @convention(c) (OpaquePointer) -> Void
    typealias Process = @convention(c) (OpaquePointer, UnsafeMutablePointer<Float>, UnsafePointer<Float>) -> Float
    typealias ModelFromBuffer = @convention(c) (UnsafeRawPointer, Int32) -> OpaquePointer?
    let create: Create
    let destroy: Destroy
    let process: Process
    /// Nil when the library has no weight list or nothing in it is quantized (then the float model runs).
    let quantized: QuantizedModel?
    /// Nil when the library lacks one of the pieces or its model has another shape than RNNoise 0.2's
    /// (then `.videoFX` falls back to the library's `rnnoise_process_frame`).
    let frame: (functions: FrameFunctions, model: RNNoiseModel)?

    /// The library's exported pieces of `rnnoise_process_frame` (RNNoise 0.2's `denoise.c`), and its
    /// constant tables.
    struct FrameFunctions: @unchecked Sendable {
        // Sendable: C function pointers and pointers to the loaded library's constant tables, never written.
        typealias Biquad = @convention(c) (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafePointer<Float>,
                                           UnsafePointer<Float>, UnsafePointer<Float>, Int32) -> Void
        typealias PitchDownsample = @convention(c) (UnsafeMutablePointer<UnsafeMutablePointer<Float>?>, UnsafeMutablePointer<Float>,
                                                    Int32, Int32) -> Void
        typealias RemoveDoubling = @convention(c) (UnsafeMutablePointer<Float>, Int32, Int32, Int32, UnsafeMutablePointer<Int32>,
                                                   Int32, Float) -> Float
        typealias PitchFilter = @convention(c) (UnsafeMutablePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>,
                                                UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>) -> Void
        /// `rnn_biquad(y, mem, x, b, a, n)`: the input high-pass.
        let biquad: Biquad
        /// `rnn_pitch_downsample(&buffer, low, 1728, 1)`: the pitch buffer low-passed, halved and whitened.
        let pitchDownsample: PitchDownsample
        /// `rnn_remove_doubling(low, 768, 60, 960, &period, lastPeriod, lastGain)`: the period checked against
        /// its fractions, and the pitch gain.
        let removeDoubling: RemoveDoubling
        /// `rnn_pitch_filter(X, P, Ex, Ep, Exp, g)`: the comb filter at the pitch, in the spectrum.
        let pitchFilter: PitchFilter
        /// `rnn_half_window`: the first half of the 960-point analysis and synthesis window.
        let window: UnsafePointer<Float>
        /// `eband20ms`: the 34 band edges in bins.
        let bandEdges: UnsafePointer<Int32>
        /// `rnn_dct_table`: the 32 × 32 DCT-II basis.
        let dctTable: UnsafePointer<Float>

        init?(library handle: UnsafeMutableRawPointer) {
            guard let biquad = dlsym(handle, "rnn_biquad"), let downsample = dlsym(handle, "rnn_pitch_downsample"),
                  let doubling = dlsym(handle, "rnn_remove_doubling"), let pitchFilter = dlsym(handle, "rnn_pitch_filter"),
                  let window = dlsym(handle, "rnn_half_window"), let edges = dlsym(handle, "eband20ms"),
                  let dct = dlsym(handle, "rnn_dct_table") else { return nil }
            self.biquad = unsafeBitCast(biquad, to: Biquad.self)
            pitchDownsample = unsafeBitCast(downsample, to: PitchDownsample.self)
            removeDoubling = unsafeBitCast(doubling, to: RemoveDoubling.self)
            dctTable = UnsafeRawPointer(dct).assumingMemoryBound(to: Float.self)
            self.pitchFilter = unsafeBitCast(pitchFilter, to: PitchFilter.self)
            self.window = UnsafeRawPointer(window).assumingMemoryBound(to: Float.self)
            bandEdges = UnsafeRawPointer(edges).assumingMemoryBound(to: Int32.self)
            // RNNoise 0.2's 32 bands over the 481 bins of a 960-point FFT.
            guard bandEdges[0] == 0, bandEdges[RNNoiseChannel.bands + 1] <= Int32(RNNoiseChannel.bins),
                  (0...RNNoiseChannel.bands).allSatisfy({ bandEdges[$0] < bandEdges[$0 + 1] }) else { return nil }
        }
    }

    static let missing = "librnnoise.so not found (scripts/setup.sh installs it into .build/rnnoise; or set VFX_RNNOISE_LIBRARY), "
        + "or use engine=spectral"

    /// Nil when no candidate loads or lacks a symbol.
    static let shared: RNNoiseLibrary? = {
        var candidates: [String] = []
        if let given = ProcessInfo.processInfo.environment["VFX_RNNOISE_LIBRARY"] { candidates.append(given) }
        candidates.append(FileManager.default.currentDirectoryPath + "/.build/rnnoise/librnnoise.so")
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath().deletingLastPathComponent()
        candidates += ["../rnnoise", "../../rnnoise", "../../.build/rnnoise"].map {
            executable.appendingPathComponent($0).appendingPathComponent("librnnoise.so").standardized.path
        }
        candidates += ["librnnoise.so.0", "librnnoise.so"]
        for path in candidates {
            guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else { continue }
            guard let create = dlsym(handle, "rnnoise_create"), let destroy = dlsym(handle, "rnnoise_destroy"),
                  let process = dlsym(handle, "rnnoise_process_frame") else {
                dlclose(handle)
                continue
            }
            let arrays = weightList(library: handle)
            var frame: (FrameFunctions, RNNoiseModel)?
            if let functions = FrameFunctions(library: handle), let arrays,
               let model = RNNoiseModel(arrays: Dictionary(arrays.map { ($0.name, (type: $0.type, size: $0.size, data: $0.data)) },
                                                           uniquingKeysWith: { first, _ in first })) {
                frame = (functions, model)
            }
            return RNNoiseLibrary(create: unsafeBitCast(create, to: Create.self), destroy: unsafeBitCast(destroy, to: Destroy.self),
                                  process: unsafeBitCast(process, to: Process.self),
                                  quantized: arrays.flatMap { QuantizedModel(library: handle, arrays: $0) }, frame: frame)
        }
        return nil
    }()

    /// One array of the library's weight list.
    struct WeightArray {
        let name: String
        let type: Int32
        let size: Int
        let data: UnsafeRawPointer
    }

    /// The library's weight list (`rnnoise_arrays`: per array a name pointer, two ints — type, size — and a
    /// data pointer, 24 bytes; a null name ends it). Nil when it is missing or malformed.
    static func weightList(library handle: UnsafeMutableRawPointer) -> [WeightArray]? {
        guard let list = dlsym(handle, "rnnoise_arrays") else { return nil }
        var entries: [WeightArray] = []
        var cursor = UnsafeRawPointer(list)
        while let name = cursor.load(as: UnsafePointer<CChar>?.self), entries.count < 4096 {
            let size = Int(cursor.load(fromByteOffset: 12, as: Int32.self))
            guard let data = cursor.load(fromByteOffset: 16, as: UnsafeRawPointer?.self), size > 0 else { return nil }
            entries.append(WeightArray(name: String(cString: name), type: cursor.load(fromByteOffset: 8, as: Int32.self), size: size, data: data))
            cursor += 24
        }
        return entries
    }
}

/// RNNoise's model without the float copies of the matrices that also come as 8-bit integers: the
/// library's weight list rewritten in its weight-file format (per array a 64-byte head — `DNNw`, version 0,
/// type, size, size rounded up to 64, the name in 44 bytes — then the data padded to 64 bytes) and loaded
/// with `rnnoise_model_from_buffer`. Built once per process; the model points into the buffer, so both
/// stay for the life of the process.
final class QuantizedModel: @unchecked Sendable {
    // Sendable: `model` and the buffer behind it are written once in init and only read afterwards (by
    // `rnnoise_create`, which copies what it needs into each state).
    let model: OpaquePointer

    init?(library handle: UnsafeMutableRawPointer, arrays entries: [RNNoiseLibrary.WeightArray]) {
        guard let load = dlsym(handle, "rnnoise_model_from_buffer") else { return nil }
        let names = Set(entries.map(\.name))
        let kept = entries.filter { !($0.name.hasSuffix("_float") && names.contains(String($0.name.dropLast(6)) + "_int8")) }
        guard kept.count < entries.count, kept.allSatisfy({ $0.name.utf8.count < 44 }) else { return nil }
        let padded = { (size: Int) in (size + 63) / 64 * 64 }
        let total = kept.reduce(0) { $0 + 64 + padded($1.size) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: total, alignment: 64)
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: total)
        var offset = 0
        for entry in kept {
            let head = buffer + offset
            head.copyMemory(from: "DNNw", byteCount: 4)
            head.storeBytes(of: 0, toByteOffset: 4, as: Int32.self)
            head.storeBytes(of: entry.type, toByteOffset: 8, as: Int32.self)
            head.storeBytes(of: Int32(entry.size), toByteOffset: 12, as: Int32.self)
            head.storeBytes(of: Int32(padded(entry.size)), toByteOffset: 16, as: Int32.self)
            entry.name.withCString { (head + 20).copyMemory(from: $0, byteCount: entry.name.utf8.count) }
            (head + 64).copyMemory(from: entry.data, byteCount: entry.size)
            offset += 64 + padded(entry.size)
        }
        guard let model = unsafeBitCast(load, to: RNNoiseLibrary.ModelFromBuffer.self)(buffer, Int32(total)) else {
            buffer.deallocate()
            return nil
        }
        self.model = model
    }
}
