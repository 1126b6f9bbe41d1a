import VFXCore
import VFXPipeline
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The RNNoise engine of `noise-suppression`: Xiph's recurrent-network noise suppressor (BSD-3-Clause,
/// with its built-in weights), loaded at run time from `librnnoise.so`. VideoFX does not ship it:
/// `scripts/setup.sh` takes the library from the PyPI wheel `pyrnnoise==0.4.5` into `.build/rnnoise/`.
/// The library is looked for at `$VFX_RNNOISE_LIBRARY`, then `.build/rnnoise/librnnoise.so` under the
/// working folder and beside the executable's build folder, then by the system's loader.
///
/// RNNoise takes 480-frame blocks at 48 kHz in the 16-bit range; its output lags its input by 960 frames
/// (measured by cross-correlation on speech), and the block buffering here adds 480: the latency is 1440
/// frames (30 ms). `level` keeps the input, delayed alike, at −level dB under the output, which caps the
/// reduction at about `level`.
///
/// The library holds its network's large matrices twice, as floats and as 8-bit integers with scales, and
/// uses the floats when it has them. Reading 10.6 MB of float weights per 10 ms frame is what limits its
/// speed (the work is memory-bound: docs/audio.md), so by default (`weights: .quantized`) the states are
/// made from a model built from the library's own weight list without the float copies: the library then
/// runs its 8-bit kernels on 2.9 MB, about twice as fast; its output stays within −30 dB of the float
/// model's (`NoiseSuppressionTests`).
final class RNNoiseSuppressor: AudioFilter {
    /// Which of the library's two copies of its weights the network runs on.
    enum Weights { case quantized, float }

    let level: Float
    let weights: Weights
    private var states: [OpaquePointer] = []
    private var input: SampleStorage<Float>?
    private var output: SampleStorage<Float>?
    private var dry: SampleStorage<Float>?
    private var dryPosition = 0
    private var filled = 0
    private var floorGain: Float = 0
    static let frame = 480

    init(level: Float, weights: Weights = .quantized) {
        self.level = level
        self.weights = weights
    }

    var id: String { "noise-suppression:level=\(level):engine=rnnoise" }
    var latency: Int { 3 * RNNoiseSuppressor.frame }
    var preferredBlockSize: Int? { RNNoiseSuppressor.frame }

    func sampleRate(near rate: Int) -> Int { 48_000 }

    func initialize(sampleRate: Int, channels: Int) throws {
        release()
        guard sampleRate == 48_000 else { throw AudioFilterError.unsupportedRate(filter: id, rate: sampleRate) }
        guard let library = RNNoiseLibrary.shared else { throw AudioFilterError.engineUnavailable(filter: "noise-suppression", reason: RNNoiseLibrary.missing) }
        for _ in 0..<channels {
            guard let state = library.create(weights == .quantized ? library.quantized?.model : nil) else {
                throw AudioFilterError.engineUnavailable(filter: "noise-suppression", reason: "rnnoise_create failed")
            }
            states.append(state)
        }
        let frame = RNNoiseSuppressor.frame
        input = SampleStorage(count: frame * channels)
        output = SampleStorage(count: frame * channels)
        dry = SampleStorage(count: latency * channels)   // the input, `latency` frames back, per channel
        dryPosition = 0
        filled = 0
        floorGain = powf(10, -level / 20)
    }

    func process(_ buffer: AudioBuffer) {
        guard let library = RNNoiseLibrary.shared, let input, let output, let dry else { return }
        let frame = RNNoiseSuppressor.frame
        let channels = min(buffer.channelCount, states.count)
        let delay = latency
        var position = 0
        while position < buffer.frameCount {
            let count = min(frame - filled, buffer.frameCount - position)
            for channel in 0..<channels {
                let samples = buffer.channel(channel) + position
                let pending = input.pointer + channel * frame + filled
                let ready = output.pointer + channel * frame + filled
                let delayed = dry.pointer + channel * delay
                var cursor = dryPosition
                for index in 0..<count {
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
            dryPosition = (dryPosition + count) % delay
            filled += count
            position += count
            if filled == frame {
                for channel in 0..<channels {
                    let result = output.pointer + channel * frame
                    _ = library.process(states[channel], result, input.pointer + channel * frame)
                    for index in 0..<frame { result[index] *= 1 / 32768 }
                }
                filled = 0
            }
        }
    }

    func release() {
        if let library = RNNoiseLibrary.shared { for state in states { library.destroy(state) } }
        states = []
        input = nil
        output = nil
        dry = nil
    }

    deinit { release() }
}

/// The three functions of `librnnoise.so`, resolved once per process (the library stays loaded), and the
/// model with 8-bit weights made from its weight list.
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
            return RNNoiseLibrary(create: unsafeBitCast(create, to: Create.self), destroy: unsafeBitCast(destroy, to: Destroy.self),
                                  process: unsafeBitCast(process, to: Process.self), quantized: QuantizedModel(library: handle))
        }
        return nil
    }()
}

/// RNNoise's model without the float copies of the matrices that also come as 8-bit integers: the
/// library's weight list (`rnnoise_arrays`: name, type, size, data per array) rewritten in its weight-file
/// format (per array a 64-byte head — `DNNw`, version 0, type, size, size rounded up to 64, the name in 44
/// bytes — then the data padded to 64 bytes) and loaded with `rnnoise_model_from_buffer`. Built once per
/// process; the model points into the buffer, so both stay for the life of the process.
final class QuantizedModel: @unchecked Sendable {
    // Sendable: `model` and the buffer behind it are written once in init and only read afterwards (by
    // `rnnoise_create`, which copies what it needs into each state).
    let model: OpaquePointer

    init?(library handle: UnsafeMutableRawPointer) {
        guard let list = dlsym(handle, "rnnoise_arrays"), let load = dlsym(handle, "rnnoise_model_from_buffer") else { return nil }
        struct Entry {
            let name: String
            let type: Int32
            let size: Int
            let data: UnsafeRawPointer
        }
        var entries: [Entry] = []
        var cursor = UnsafeRawPointer(list)
        // The C struct: a name pointer, two ints, a data pointer (24 bytes); a null name ends the list.
        while let name = cursor.load(as: UnsafePointer<CChar>?.self), entries.count < 4096 {
            let size = Int(cursor.load(fromByteOffset: 12, as: Int32.self))
            guard let data = cursor.load(fromByteOffset: 16, as: UnsafeRawPointer?.self), size > 0 else { return nil }
            entries.append(Entry(name: String(cString: name), type: cursor.load(fromByteOffset: 8, as: Int32.self), size: size, data: data))
            cursor += 24
        }
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
