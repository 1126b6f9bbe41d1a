import Foundation
import VFXCore
@testable import VFXFilters
import VFXPipeline
import VFXTestSupport
import XCTest

/// `color-threshold`, `dither`, `palettize` and `mask-to-alpha` against their definitions on the RGBA bytes,
/// evaluated here pixel by pixel: exact (0 codes) for the step functions, whose definitions are exact; mask-to-alpha
/// within 1 code of the luma in Double (the stage rounds a Float sum). RGBA frames are compared directly; I420, NV12
/// and BGRA frames with the definition applied to the frame converted to RGBA and the result converted back (VideoFX's
/// own conversions, which the stage uses), again exactly. Odd sizes, one and two threads. Palettize and dither work on
/// I420/NV12 planes directly; `testPlanarPathIsExactAtEverySizeAndColourDescription` holds that path to the same bytes.
final class ColorReductionTests: XCTestCase {
    /// Pseudo-random RGBA bytes (a fixed linear congruential sequence).
    static func noise(_ count: Int, seed: UInt32) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    /// Runs `chain` on RGBA `pixels` (width × height) in every format the filter takes, with 1 and 2 threads, and
    /// compares with `definition` (RGBA bytes in, RGBA bytes out) within `tolerance` codes.
    func check(_ chain: String, _ pixels: [UInt8], width: Int, height: Int, formats: [PixelFormat] = [.rgba, .bgra, .i420, .nv12],
               tolerance: Int = 0, file: StaticString = #filePath, line: UInt = #line, _ definition: ([UInt8]) -> [UInt8]) throws {
        let rgba = RawFrames.frame(pixels, format: .rgba, width: width, height: height, color: ColorDescription(matrix: .bt709, range: .full))
        for format in formats {
            let color: ColorDescription = format.isYUV ? .bt709 : ColorDescription(matrix: .bt709, range: .full)
            let input = rgba.converted(to: format, color: color)
            let inputRGBA = RawFrames.bytes(input.converted(to: .rgba))
            let expected = RawFrames.bytes(RawFrames.frame(definition(inputRGBA), format: .rgba, width: width, height: height)
                .converted(to: format, color: color))
            for threads in [1, 2] {
                let output = try TestSupport.apply(chain, to: input, threads: threads)
                XCTAssertEqual(output.format, format, file: file, line: line)
                let bytes = RawFrames.bytes(output)
                let worst = TestSupport.maxDifference(bytes, expected)
                XCTAssertLessThanOrEqual(worst, tolerance, "\(chain) on \(format) \(width)x\(height), \(threads) threads",
                                         file: file, line: line)
            }
        }
    }

    /// Applies `transform` to each pixel's R, G, B (alpha kept) at its position.
    static func perPixel(_ pixels: [UInt8], width: Int, _ transform: (_ rgb: [Int], _ x: Int, _ y: Int) -> [Int]) -> [UInt8] {
        var out = pixels
        for i in stride(from: 0, to: pixels.count, by: 4) {
            let rgb = transform([Int(pixels[i]), Int(pixels[i + 1]), Int(pixels[i + 2])], (i / 4) % width, (i / 4) / width)
            for c in 0..<3 { out[i + c] = UInt8(rgb[c]) }
        }
        return out
    }

    func testColorThresholdIsExact() throws {
        let (width, height) = (67, 29)
        // Every code appears in every channel (the first 256 pixels run through 0…255).
        var pixels = Self.noise(4 * width * height, seed: 3)
        for code in 0..<256 { for c in 0..<4 { pixels[4 * code + c] = UInt8(code) } }
        for threshold in [0.0, 0.4, 0.45, 0.5, 102.0 / 255, 1.0] {
            // v = code/255 at or above the threshold (10⁻⁶ of slack, so that 102/255 counts as reaching 0.4).
            try check("color-threshold:threshold=\(threshold)", pixels, width: width, height: height) { rgba in
                Self.perPixel(rgba, width: width) { rgb, _, _ in rgb.map { Double($0) / 255 >= threshold - 1e-6 ? 255 : 0 } }
            }
        }
    }

    /// The 8×8 Bayer index: bits of x ⊕ y and y interleaved, lowest bits most significant.
    static func bayer(_ x: Int, _ y: Int) -> Int {
        var value = 0
        for bit in 0..<3 { value |= (((x ^ y) >> bit) & 1) << (2 * (2 - bit) + 1) | ((y >> bit) & 1) << (2 * (2 - bit)) }
        return value
    }

    /// Level k = ⌊v·s + (B + ½)/64⌋ on v = code/255, in integers: ⌊(128·code·s + 255·(2B + 1)) / (255·128)⌋; the code
    /// round(255·k/s), halves up.
    static func dither(_ code: Int, levels: Int, x: Int, y: Int) -> Int {
        let s = levels - 1
        let k = (128 * code * s + 255 * (2 * bayer(x & 7, y & 7) + 1)) / (255 * 128)
        return (510 * k + s) / (2 * s)
    }

    func testDitherIsExactForEveryCodePositionAndLevel() throws {
        // 2051 × 16: at each of the 64 positions (x mod 8, y mod 8) the red channel takes every code.
        let (width, height) = (2051, 16)
        var pixels = [UInt8](repeating: 0, count: 4 * width * height)
        for y in 0..<height {
            for x in 0..<width {
                let code = (x / 8) & 255, i = 4 * (y * width + x)
                let values: [Int] = [code, 255 - code, (code * 7 + y) & 255, (x + y) & 255]
                for c in 0..<4 { pixels[i + c] = UInt8(values[c]) }
            }
        }
        let rgba = RawFrames.frame(pixels, format: .rgba, width: width, height: height)
        for levels in 2...64 {
            let expected = Self.perPixel(pixels, width: width) { rgb, x, y in rgb.map { Self.dither($0, levels: levels, x: x, y: y) } }
            let output = RawFrames.bytes(try TestSupport.apply("dither:levels=\(levels)", to: rgba, threads: levels % 2 + 1))
            XCTAssertEqual(TestSupport.maxDifference(output, expected), 0, "levels \(levels)")
        }
        // Odd sizes, every format, two threads.
        let (w, h) = (45, 27)
        let noise = Self.noise(4 * w * h, seed: 11)
        for levels in [2, 3, 4, 7, 64] {
            try check("dither:levels=\(levels)", noise, width: w, height: h) { rgba in
                Self.perPixel(rgba, width: w) { rgb, x, y in rgb.map { Self.dither($0, levels: levels, x: x, y: y) } }
            }
        }
    }

    static let palettes: [String: [Int]] = [
        "gameboy": [0x0f380f, 0x306230, 0x8bac0f, 0x9bbc0f],
        "cga": [0x000000, 0x55ffff, 0xff55ff, 0xffffff],
        "gray4": [0x000000, 0x555555, 0xaaaaaa, 0xffffff],
        "rgb8": [0x000000, 0xff0000, 0x00ff00, 0x0000ff, 0xffff00, 0xff00ff, 0x00ffff, 0xffffff],
        "pico8": [0x000000, 0x1d2b53, 0x7e2553, 0x008751, 0xab5236, 0x5f574f, 0xc2c3c7, 0xfff1e8,
                  0xff004d, 0xffa300, 0xffec27, 0x00e436, 0x29adff, 0x83769c, 0xff77a8, 0xffccaa],
    ]

    /// The palette colour with the smallest squared distance to `rgb` over the bytes, the first on a tie.
    static func nearest(_ rgb: [Int], _ palette: [Int]) -> [Int] {
        var best: [Int] = [], distance = Int.max
        for code in palette {
            let c = [(code >> 16) & 255, (code >> 8) & 255, code & 255]
            let d = zip(c, rgb).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }
            if d < distance { (best, distance) = (c, d) }
        }
        return best
    }

    /// The colours palettize is checked on for `palette`: every corner of the stage's cells, colours equidistant from
    /// two palette colours, the palette colours, and random colours.
    static func palettizeColors(_ palette: [Int]) -> [[Int]] {
        var colors: [[Int]] = []
        // Every corner of the stage's 8×8×8 cells (coordinates 8n and 8n + 7): 64³ colours.
        let corners = (0..<64).map { 8 * ($0 / 2) + 7 * ($0 % 2) }
        for r in corners { for g in corners { for b in corners { colors.append([r, g, b]) } } }
        // Colours at equal distance from two palette colours (midpoints, and points beside them on the bisecting
        // plane), where the first of the two must win; and the palette colours themselves.
        for (i, a) in palette.enumerated() {
            for b in palette[(i + 1)...] {
                let ca = [(a >> 16) & 255, (a >> 8) & 255, a & 255], cb = [(b >> 16) & 255, (b >> 8) & 255, b & 255]
                let sum = zip(ca, cb).map { $0 + $1 }
                guard sum.allSatisfy({ $0 % 2 == 0 }) else { continue }
                let middle = sum.map { $0 / 2 }
                colors.append(middle)
                // middle + m·t with t ⟂ (b − a) stays equidistant from both: t = (d.y, −d.x, 0), (0, d.z, −d.y),
                // (d.z, 0, −d.x) for d = b − a, each divided by the gcd of its components.
                let d = zip(cb, ca).map { $0 - $1 }
                func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? abs(a) : gcd(b, a % b) }
                for t in [[d[1], -d[0], 0], [0, d[2], -d[1]], [d[2], 0, -d[0]]] {
                    let g = t.reduce(0, gcd)
                    guard g > 0 else { continue }
                    for m in [1, -1, 3] {
                        let point = zip(middle, t).map { $0 + m * $1 / g }
                        guard point.allSatisfy({ (0...255).contains($0) }) else { continue }
                        let da = zip(point, ca).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }
                        let db = zip(point, cb).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }
                        precondition(da == db, "a point on the bisecting plane")
                        colors.append(point)
                    }
                }
            }
            colors.append([(a >> 16) & 255, (a >> 8) & 255, a & 255])
        }
        // Random colours.
        let noise = Self.noise(3 * 4000, seed: 7)
        for i in 0..<4000 { colors.append([Int(noise[3 * i]), Int(noise[3 * i + 1]), Int(noise[3 * i + 2])]) }
        return colors
    }

    func testPalettizeIsExactWithTiesAndCellBoundaries() throws {
        for (name, palette) in Self.palettes.sorted(by: { $0.key < $1.key }) {
            let colors = Self.palettizeColors(palette)
            let width = 509, height = (colors.count + width - 1) / width
            var pixels = [UInt8](repeating: 0, count: 4 * width * height)
            for (i, c) in colors.enumerated() {
                pixels[4 * i] = UInt8(c[0]); pixels[4 * i + 1] = UInt8(c[1]); pixels[4 * i + 2] = UInt8(c[2]); pixels[4 * i + 3] = UInt8(i & 255)
            }
            // Colours whose smallest distance is shared by two palette colours (cga and gameboy have many).
            let shared = colors.filter { c in
                let distances = palette.map { code in
                    zip([(code >> 16) & 255, (code >> 8) & 255, code & 255], c).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }
                }
                return distances.filter { $0 == distances.min() }.count > 1
            }.count
            if name == "cga" || name == "gameboy" { XCTAssertGreaterThan(shared, 20, "\(name): colours with a tie in the test") }
            try check("palettize:palette=\(name)", pixels, width: width, height: height, formats: [.rgba]) { rgba in
                Self.perPixel(rgba, width: width) { rgb, _, _ in Self.nearest(rgb, palette) }
            }
            // Every format on a smaller, odd-sized frame.
            let (w, h) = (37, 19)
            try check("palettize:palette=\(name)", Array(pixels[..<(4 * w * h)]), width: w, height: h) { rgba in
                Self.perPixel(rgba, width: w) { rgb, _, _ in Self.nearest(rgb, palette) }
            }
        }
    }

    /// The index of the palette colour nearest to `rgb` (the first on a tie).
    static func nearestIndex(_ rgb: [Int], _ palette: [Int]) -> Int {
        let best = nearest(rgb, palette)
        return palette.firstIndex { [($0 >> 16) & 255, ($0 >> 8) & 255, $0 & 255] == best } ?? -1
    }

    /// Planar steps with many pixels in mixed cells are settled by a search over the whole palette in 32-bit lanes
    /// (`PaletteKernel.nearestInLanes`), the others pixel by pixel through the finer tables; which one a step takes
    /// depends on its pixels, so both are checked here directly on steps of 64 pixels, exactly (0: the definition is
    /// exact): the lane search's colour numbers, and `map`'s R', G', B' codes, against the nearest colour computed here,
    /// on every palette's cell corners, ties (where the first colour must win) and random colours.
    func testPaletteLaneSearchAndStepsAreExact() throws {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: PlanarStep.byteCount, alignment: 64)
        defer { memory.deallocate() }
        let step = PlanarStep(base: memory.assumingMemoryBound(to: UInt8.self))
        let numbers = UnsafeMutableRawPointer(step.scratch + 128)
        for (name, palette) in Self.palettes.sorted(by: { $0.key < $1.key }) {
            let kernel = PaletteKernel(codes: palette.map { UInt32($0) })
            let colors = Self.palettizeColors(palette)
            var (wrongNumbers, wrongCodes) = (0, 0)
            for start in stride(from: 0, to: colors.count, by: 64) {
                let block = (0..<64).map { colors[min(start + $0, colors.count - 1)] }
                func fill() {
                    for (i, c) in block.enumerated() {
                        for channel in 0..<3 {
                            UnsafeMutableRawPointer(step.channel(i >> 4, channel)).storeBytes(of: Int16(c[channel]), toByteOffset: 2 * (i & 15),
                                                                                              as: Int16.self)
                        }
                    }
                }
                fill()
                kernel.nearestInLanes(step, to: step.scratch + 128)
                fill()
                kernel.map(step, rows: (0, 1))
                for (i, c) in block.enumerated() {
                    let number = Int(numbers.load(fromByteOffset: 2 * i, as: Int16.self))
                    if number != Self.nearestIndex(c, palette) { wrongNumbers += 1 }
                    if (0..<3).map({ Int(step.code(i >> 4, $0, i & 15)) }) != Self.nearest(c, palette) { wrongCodes += 1 }
                }
            }
            XCTAssertEqual(wrongNumbers, 0, "\(name): lane search")
            XCTAssertEqual(wrongCodes, 0, "\(name): steps")
        }
    }

    /// Palettize and dither on I420 and NV12 frames work in the frame's planes (32 columns × 2 rows a step, into the rows'
    /// padding); the bytes must be those of the round trip exactly: each frame converted to RGBA with VideoFX's
    /// conversion, the definition applied to each pixel here, the result converted back. Random luma and chroma bytes
    /// (colours outside the RGB cube included, so the clamping counts), widths that end at every kind of place in a
    /// step (1, 31, 33, 63, 65, 97: the odd column's repeated pixel in the last lane or the first), odd heights, limited
    /// and full range, a frame the stage may overwrite and one it must not (the output then goes to a pool buffer), and
    /// two threads; gray frames (which come out RGBA) and planes without VideoFX's kernel layout (which go through RGBA)
    /// the same way.
    func testPlanarPathIsExactAtEverySizeAndColourDescription() throws {
        let chains: [(String, (_ rgb: [Int], _ x: Int, _ y: Int) -> [Int])] = [
            ("palettize:palette=pico8", { rgb, _, _ in Self.nearest(rgb, Self.palettes["pico8"]!) }),
            ("palettize:palette=cga", { rgb, _, _ in Self.nearest(rgb, Self.palettes["cga"]!) }),
            ("palettize:palette=gameboy", { rgb, _, _ in Self.nearest(rgb, Self.palettes["gameboy"]!) }),
            ("dither:levels=2", { rgb, x, y in rgb.map { Self.dither($0, levels: 2, x: x, y: y) } }),
            ("dither:levels=5", { rgb, x, y in rgb.map { Self.dither($0, levels: 5, x: x, y: y) } }),
            ("dither:levels=64", { rgb, x, y in rgb.map { Self.dither($0, levels: 64, x: x, y: y) } }),
        ]
        let sizes = [(1, 1), (2, 2), (31, 3), (33, 5), (63, 4), (65, 17), (97, 7)]
        // I420 with BT.709 limited range, NV12 with BT.601 full range.
        let colors = [ColorDescription.bt709, ColorDescription(matrix: .bt601, range: .full)]
        var seed: UInt32 = 21
        for (chain, definition) in chains {
            for (width, height) in sizes {
                for (format, color) in zip([PixelFormat.i420, .nv12], colors) {
                    do {
                        seed += 1
                        let bytes = Self.noise(width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2), seed: seed)
                        let input = RawFrames.frame(bytes, format: .i420, width: width, height: height, color: color)
                            .converted(to: format, color: color)
                        let rgba = RawFrames.bytes(input.converted(to: .rgba))
                        let expected = RawFrames.bytes(RawFrames.frame(Self.perPixel(rgba, width: width, definition), format: .rgba,
                                                                       width: width, height: height)
                            .converted(to: format, color: color))
                        let label = "\(chain) on \(format) \(width)x\(height) \(color.range)"
                        // Shared (the test keeps `input`): the output goes to a pool buffer.
                        let shared = try TestSupport.apply(chain, to: input, threads: 2)
                        XCTAssertEqual(shared.format, format, label)
                        XCTAssertEqual(TestSupport.maxDifference(RawFrames.bytes(shared), expected), 0, "\(label), shared")
                        // Not shared: worked on in place.
                        let processor = try FilterChain(parsing: chain).makeProcessor(threads: 1)
                        _ = try processor.configure(for: FrameFormat(of: input))
                        let copy = RawFrames.frame(bytes, format: .i420, width: width, height: height, color: color).converted(to: format, color: color)
                        let own = try XCTUnwrap(processor.frames(from: consume copy).first)
                        XCTAssertEqual(TestSupport.maxDifference(RawFrames.bytes(own), expected), 0, "\(label), in place")
                    }
                }
            }
            // Gray frames come out RGBA: the definition on the gray pixels as RGBA.
            let (width, height) = (41, 9)
            let gray = RawFrames.frame(Self.noise(width * height, seed: 5), format: .gray8, width: width, height: height)
            let output = try TestSupport.apply(chain, to: gray, threads: 1)
            XCTAssertEqual(output.format, .rgba)
            let expected = Self.perPixel(RawFrames.bytes(gray.converted(to: .rgba)), width: width, definition)
            XCTAssertEqual(TestSupport.maxDifference(RawFrames.bytes(output), expected), 0, "\(chain) on gray")
            // I420 planes a caller owns, rows exactly as wide as the picture (no padding to write into).
            let bytes = Self.noise(width * height + 2 * 21 * 5, seed: 6)
            let planes = try bytes.withUnsafeBufferPointer { buffer -> VideoFrame in
                let base = UnsafeMutablePointer(mutating: buffer.baseAddress!)
                let y = Plane(baseAddress: base, bytesPerRow: width, width: width, height: height, bytesPerPixel: 1)
                let u = Plane(baseAddress: base + width * height, bytesPerRow: 21, width: 21, height: 5, bytesPerPixel: 1)
                let v = Plane(baseAddress: base + width * height + 105, bytesPerRow: 21, width: 21, height: 5, bytesPerPixel: 1)
                let wrapped = VideoFrame(buffer: try PixelBuffer(wrapping: [y, u, v], format: .i420, width: width, height: height),
                                         color: .bt709)
                let result = try TestSupport.apply(chain, to: wrapped, threads: 1)
                let expected = RawFrames.bytes(RawFrames.frame(Self.perPixel(RawFrames.bytes(wrapped.converted(to: .rgba)), width: width,
                                                                             definition), format: .rgba, width: width, height: height)
                    .converted(to: .i420, color: .bt709))
                XCTAssertEqual(TestSupport.maxDifference(RawFrames.bytes(result), expected), 0, "\(chain) on wrapped I420 planes")
                return result
            }
            XCTAssertEqual(planes.format, .i420)
        }
    }

    func testMaskToAlphaIsTheLuma() throws {
        let (width, height) = (53, 21)
        let pixels = Self.noise(4 * width * height, seed: 9)
        // White; alpha = Kr·R + Kg·G + Kb·B with the frame's matrix (BT.709 here), rounded: within 1 code (the weights in
        // 1/65536 put the sum within 0.006 of a code, so it rounds the other way only that close to a half code).
        try check("mask-to-alpha", pixels, width: width, height: height, formats: [.rgba, .bgra], tolerance: 1) { rgba in
            var out = rgba
            for i in stride(from: 0, to: rgba.count, by: 4) {
                let luma = 0.2126 * Double(rgba[i]) + 0.7152 * Double(rgba[i + 1]) + 0.0722 * Double(rgba[i + 2])
                (out[i], out[i + 1], out[i + 2], out[i + 3]) = (255, 255, 255, UInt8(luma.rounded()))
            }
            return out
        }
    }
}
