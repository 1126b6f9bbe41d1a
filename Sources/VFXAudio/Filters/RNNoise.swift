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
final class RNNoiseSuppressor: AudioFilter {
    let level: Float
    private var states: [OpaquePointer] = []
    private var input: SampleStorage<Float>?
    private var output: SampleStorage<Float>?
    private var dry: SampleStorage<Float>?
    private var dryPosition = 0
    private var filled = 0
    private var floorGain: Float = 0
    static let frame = 480

    init(level: Float) {
        self.level = level
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
            guard let state = library.create(nil) else {
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

/// The three functions of `librnnoise.so`, resolved once per process (the library stays loaded).
struct RNNoiseLibrary: Sendable {
    typealias Create = @convention(c) (OpaquePointer?) -> OpaquePointer?
    typealias Destroy = @convention(c) (OpaquePointer) -> Void
    typealias Process = @convention(c) (OpaquePointer, UnsafeMutablePointer<Float>, UnsafePointer<Float>) -> Float
    let create: Create
    let destroy: Destroy
    let process: Process

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
                                  process: unsafeBitCast(process, to: Process.self))
        }
        return nil
    }()
}
