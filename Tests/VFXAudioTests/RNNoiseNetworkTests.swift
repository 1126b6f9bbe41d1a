import Foundation
import Testing
@testable import VFXAudio

/// VideoFX's run of RNNoise's network (`RNNoiseNetwork`, the `.videoFX` runner of `RNNoiseSuppressor`)
/// against the library's own `rnnoise_process_frame` on the same weights, and the 8-bit kernel against
/// plain integer loops.
@Suite struct RNNoiseNetworkTests {
    /// The whole frame (features, network, gains, synthesis) on LibriVox speech mixed with white and with
    /// the recorded ALSA noise at 0 and 5 dB SNR, at level 60 (the dry mix is below the 16-bit floor):
    /// the output is the library's own. On x86-64 release builds the arithmetic is the library's to the
    /// operation (the same rounding of the inputs, exact integer sums, the same reciprocal estimate in the
    /// activations), so the samples are expected equal: the test allows a difference 120 dB under the
    /// output (far below 16-bit quantization). Elsewhere the activations divide exactly (a relative change
    /// of about 1e-4 against the estimate) and the tolerance is 40 dB under the output.
    @Test(arguments: [0.0, 5.0])
    func outputIsTheLibrarys(snr: Double) throws {
        let library = try #require(RNNoiseLibrary.shared, "librnnoise.so (scripts/setup.sh)")
        #expect(library.frame != nil, "the library's pieces or model were not found: the network would not run")
        let speech = try AudioFixtures.speech(utterances: 2)
        let recorded = try AudioFixtures.read(AudioFixtures.recordedNoise, rate: 48_000)[0]
        for (name, noise) in [("white", AudioFixtures.whiteNoise(count: speech.count)), ("recorded", recorded)] {
            let mixed = AudioFixtures.mix(speech, noise, snr: snr).mixture
            let own = RNNoiseSuppressor(level: 60, runner: .videoFX)
            try own.initialize(sampleRate: 48_000, channels: 1)
            #expect(own.runsOwnNetwork)
            own.release()
            let ours = try AudioFixtures.run(own, on: mixed)
            let reference = try AudioFixtures.run(RNNoiseSuppressor(level: 60, runner: .library(.quantized)), on: mixed)
            let difference = zip(ours, reference).map { $0 - $1 }
            let ratio = AudioFixtures.decibels(max(AudioFixtures.power(difference), 1e-30) / AudioFixtures.power(reference))
            #if arch(x86_64) && VFX_HASWELL
            let tolerance = -120.0
            #else
            let tolerance = -40.0
            #endif
            #expect(ratio <= tolerance, "\(name) at \(snr) dB: the output differs from the library's by \(ratio) dB")
            // The output is not the input: the network's gains were applied.
            let untouched = AudioFixtures.decibels(AudioFixtures.power(ours) / AudioFixtures.power(mixed))
            #expect(untouched < -1, "\(name): output level \(untouched) dB against the input")
        }
    }

    /// The 8-bit products of every layer of the library's model, on random inputs 0…254 (q + 127) and on the
    /// extremes (254 where the first row's weight is positive, 0 elsewhere: its largest sum): each vector
    /// kernel's sums equal the plain loops' exactly, and the plain loops equal the sum written out in the
    /// test from the block layout. The model's layers all pass the 16-bit pair check, so the fast kernel
    /// is the one that runs.
    @Test func vectorKernelsEqualPlainLoops() throws {
        let library = try #require(RNNoiseLibrary.shared)
        let model = try #require(library.frame?.model)
        var generator = SystemRandomNumberGenerator()
        let layers = [model.convolution2, model.gru1.input, model.gru1.recurrent, model.gru2.input, model.gru2.recurrent,
                      model.gru3.input, model.gru3.recurrent]
        for (index, layer) in layers.enumerated() {
            #expect(layer.pairsFitSixteenBits, "layer \(index)")
            let random = (0..<layer.columns).map { _ in UInt8.random(in: 0...254, using: &generator) }
            let extreme = (0..<layer.columns).map { column in layer.weights[(column / 4) * 32 + column % 4] >= 0 ? UInt8(254) : 0 }
            for input in [random, extreme] {
                var plain = [Int32](repeating: 1, count: layer.rows)
                Int8Product.portable(layer.weights, rows: layer.rows, columns: layer.columns, input: input, into: &plain)
                var chosen = [Int32](repeating: 0, count: layer.rows)
                Int8Product.run(layer, input: input, into: &chosen)
                #expect(chosen == plain, "layer \(index)")
                #if arch(x86_64) && VFX_HASWELL
                var unsigned = [Int32](repeating: 0, count: layer.rows), signed = [Int32](repeating: 0, count: layer.rows)
                Int8Product.unsignedInputs(layer.weights, rows: layer.rows, columns: layer.columns, input: input, into: &unsigned)
                Int8Product.signedInputs(layer.weights, rows: layer.rows, columns: layer.columns, input: input, into: &signed)
                #expect(unsigned == plain, "layer \(index), unsigned inputs")
                // The signed form gives Σw·q; Σw·u = Σw·q + 127·Σw (the row sums taken here from the plain loops
                // on inputs of 1).
                var rowSums = [Int32](repeating: 0, count: layer.rows)
                Int8Product.portable(layer.weights, rows: layer.rows, columns: layer.columns,
                                     input: [UInt8](repeating: 1, count: layer.columns), into: &rowSums)
                #expect(zip(zip(signed, rowSums), plain).allSatisfy { $0.0 &+ 127 &* $0.1 == $1 }, "layer \(index), signed inputs")
                #endif
                // The plain loops against the sum written out: row r, column c at block (r/8, c/4), place (r%8, c%4).
                let blocks = layer.columns / 4
                for row in [0, 7, layer.rows - 1] {
                    var sum: Int32 = 0
                    for column in 0..<layer.columns {
                        let offset = ((row / 8) * blocks + column / 4) * 32 + (row % 8) * 4 + column % 4
                        sum += Int32(layer.weights[offset]) * Int32(input[column])
                    }
                    #expect(plain[row] == sum, "layer \(index) row \(row)")
                }
            }
        }
    }
}
