import Foundation
import VFXCore
@testable import VFXEffects
import VFXFilters
import VFXMedia
import VFXPipeline
import VFXTestSupport
import VFXVision
import XCTest

/// Face anonymizing and stickers, judged by MediaPipe's own face detector (scripts/reference/detect_faces.py).
final class FaceEffectsTests: XCTestCase {
    /// Pictures with faces: the portraits and the two group pictures of the vision references (when made),
    /// else the portraits in media/.
    static func pictures() throws -> [(String, VideoFrame)] {
        let references = TestMedia.root.appendingPathComponent(".build/reference-vision/images")
        var names = [TestMedia.path("astronaut.png")]
        for group in ["grace_hopper.png", "group_4x2.png", "group_6x3.png"] {
            let path = references.appendingPathComponent(group).path
            if FileManager.default.fileExists(atPath: path) { names.append(path) }
        }
        return try names.map { ($0, try XCTUnwrap(Effects.read($0).first)) }
    }

    /// face-pixelate: MediaPipe (short and full range) finds none of the faces in the output that it found in the
    /// input (no output face overlapping an input face at IoU > 0.3), on the pictures and every carphone frame.
    func testFacePixelateHidesEveryFaceFromMediaPipe() throws {
        try checkHidesEveryFace("face-pixelate")
    }

    /// face-blur, the same check: every face MediaPipe found before is gone after, on the pictures and the clip.
    func testFaceBlurHidesEveryFaceFromMediaPipe() throws {
        try checkHidesEveryFace("face-blur")
    }

    func checkHidesEveryFace(_ chain: String) throws {
        var checked = 0
        for (name, picture) in try Self.pictures() {
            let output = try Effects.apply(chain, to: picture)
            let before = try Effects.mediaPipeFaces([picture]), after = try Effects.mediaPipeFaces([output])
            for (found, left) in [(before.short[0], after.short[0]), (before.full[0], after.full[0])] {
                checked += found.count
                for face in found {
                    XCTAssertFalse(left.contains { $0.iou(face) > 0.3 }, "\(name): a face is still found after \(chain)")
                }
            }
        }
        let clip = try Effects.read(TestMedia.path("carphone_pristine.mp4"))
        let outputs = try Effects.apply(chain, to: clip)
        XCTAssertEqual(outputs.count, clip.count)
        let before = try Effects.mediaPipeFaces(clip), after = try Effects.mediaPipeFaces(outputs)
        var clipFaces = 0
        for index in clip.indices {
            for (found, left) in [(before.short[index], after.short[index]), (before.full[index], after.full[index])] {
                clipFaces += found.count
                for face in found {
                    XCTAssertFalse(left.contains { $0.iou(face) > 0.3 }, "carphone frame \(index): a face is still found after \(chain)")
                }
            }
        }
        print("\(chain): \(checked) picture faces and \(clipFaces) clip faces found by MediaPipe before, none after")
        XCTAssertGreaterThan(clipFaces, clip.count, "MediaPipe should find the face in the clip")
    }

    /// face-blur changes the faces and nothing far from them: pixels more than a face box away from every face
    /// MediaPipe found are unchanged.
    func testFaceBlurStaysOnTheFace() throws {
        let picture = try XCTUnwrap(Effects.read(TestMedia.path("astronaut.png")).first)
        let output = try Effects.apply("face-blur:radius=12", to: picture)
        let faces = try Effects.mediaPipeFaces([picture]).short[0]
        let face = try XCTUnwrap(faces.first)
        let a = Effects.rgb(picture), b = Effects.rgb(output)
        let w = Double(picture.width), h = Double(picture.height)
        var inside = 0.0, insideCount = 0
        for y in 0..<picture.height {
            for x in 0..<picture.width {
                let nx = (Double(x) + 0.5) / w, ny = (Double(y) + 0.5) / h
                let dx = max(face.box.x - nx, nx - face.box.x - face.box.width, 0) / face.box.width
                let dy = max(face.box.y - ny, ny - face.box.y - face.box.height, 0) / face.box.height
                let i = 3 * (y * picture.width + x)
                if dx > 1 || dy > 1 {
                    XCTAssertEqual(Array(a[i..<(i + 3)]), Array(b[i..<(i + 3)]), "pixel \(x),\(y) far from the face changed")
                } else if dx == 0 && dy == 0 {
                    inside += (0..<3).reduce(0.0) { $0 + abs(Double(a[i + $1]) - Double(b[i + $1])) }
                    insideCount += 3
                }
            }
        }
        XCTAssertGreaterThan(inside / Double(insideCount), 4, "the face should be blurred")
    }

    /// face-sticker with anchor=nose: the sticker's centre (the centroid of its magenta pixels in the output) is
    /// within 10 % of the face width of MediaPipe's nose-tip keypoint in at least 95 % of the carphone frames where
    /// MediaPipe finds the face.
    func testFaceStickerFollowsTheNose() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-sticker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A magenta disk with soft alpha, 64×64, written as PNG by FFmpeg from raw RGBA.
        var disk: [UInt8] = []
        for y in 0..<64 {
            for x in 0..<64 {
                let d = hypot(Double(x) + 0.5 - 32, Double(y) + 0.5 - 32)
                disk += [255, 0, 255, UInt8(max(0, min(1, 30 - d)) * 255)]
            }
        }
        let raw = folder.appendingPathComponent("disk.rgba"), png = folder.appendingPathComponent("disk.png").path
        try Data(disk).write(to: raw)
        let run = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgba", "-s", "64x64",
                                                          "-i", raw.path, "-frames:v", "1", png])
        XCTAssertEqual(run.status, 0, run.stderr)

        let clip = try Effects.read(TestMedia.path("carphone_pristine.mp4"))
        let outputs = try Effects.apply("face-sticker:file=\(png):anchor=nose:scale=0.3", to: clip)
        let reference = try Effects.mediaPipeFaces(clip).short
        var judged = 0, close = 0, worst = 0.0
        for (index, output) in outputs.enumerated() {
            guard let face = reference[index].first else { continue }
            judged += 1
            let rgb = Effects.rgb(output)
            var sumX = 0.0, sumY = 0.0, count = 0.0
            for y in 0..<output.height {
                for x in 0..<output.width {
                    let i = 3 * (y * output.width + x)
                    if rgb[i] > 180 && rgb[i + 2] > 180 && rgb[i + 1] < 90 { sumX += Double(x) + 0.5; sumY += Double(y) + 0.5; count += 1 }
                }
            }
            guard count > 0 else { continue }
            let nose = face.keypoints[2]
            let distance = hypot(sumX / count - nose.x * Double(output.width), sumY / count - nose.y * Double(output.height))
                / (face.box.width * Double(output.width))
            worst = max(worst, distance)
            if distance <= 0.1 { close += 1 }
        }
        print("face-sticker nose anchor: \(close) of \(judged) frames within 10 % of the face width (worst \(worst))")
        XCTAssertGreaterThan(judged, 100)
        XCTAssertGreaterThanOrEqual(Double(close), 0.95 * Double(judged))
    }

    /// The drawn stickers are real pictures: transparent around, opaque inside, and they land on the face.
    /// A drawn sticker keeps its own anchor and scale only when the chain gives none: `anchor=face` and `scale=1`
    /// given (the defaults' values) are taken, where they used to be mistaken for "not given" and replaced by the
    /// badge's forehead and 0.45. On the astronaut the badge then covers about 1 / 0.45 times as many columns
    /// (at least 1.8×). A file with a drawn sticker is refused: one of the two would be ignored.
    func testDrawnStickerTakesTheAnchorAndScaleGiven() throws {
        VFXEffects.register()
        let portrait = try XCTUnwrap(Effects.read(TestMedia.path("astronaut.png")).first)
        func sticker(_ chain: String) throws -> FaceStickerProcessor {
            let description = try XCTUnwrap(FilterChain(parsing: chain).filters.first)
            let context = FilterContext(format: FrameFormat(of: portrait), slices: SliceRunner(threads: 1))
            var processor: (any FrameProcessor)?
            if case .processor(let stage) = try FilterSpec.faceSticker.makeStage(description.arguments(), context) { processor = stage }
            return try XCTUnwrap(processor as? FaceStickerProcessor, "face-sticker makes a FaceStickerProcessor")
        }
        let own = try sticker("face-sticker:sticker=badge"), given = try sticker("face-sticker:sticker=badge:anchor=face:scale=1")
        XCTAssertEqual(own.anchor, .forehead)
        XCTAssertEqual(own.scale, 0.45, accuracy: 1e-6)
        XCTAssertEqual(given.anchor, .face)
        XCTAssertEqual(given.scale, 1)
        func changedColumns(_ chain: String) throws -> Int {
            let input = Effects.rgb(portrait), output = Effects.rgb(try Effects.apply(chain, to: portrait))
            var columns = Set<Int>()
            for i in stride(from: 0, to: input.count, by: 3) where input[i..<(i + 3)] != output[i..<(i + 3)] { columns.insert((i / 3) % portrait.width) }
            return columns.count
        }
        let small = try changedColumns("face-sticker:sticker=badge"), large = try changedColumns("face-sticker:sticker=badge:anchor=face:scale=1")
        XCTAssertGreaterThan(Double(large), 1.8 * Double(small), "\(large) columns against \(small)")
        XCTAssertThrowsError(try FilterChain(parsing: "face-sticker:sticker=glasses:file=/tmp/logo.png")) { error in
            XCTAssertEqual("\(error)", "face-sticker: sticker must be none when file is given, got 'glasses'")
        }
    }

    func testDrawnStickersHaveAlphaAndLandOnTheFace() throws {
        for art in StickerArt.allCases {
            let picture = art.picture()
            let plane = picture.plane(0)
            XCTAssertEqual(plane.row(0)[3], 0, "\(art): corner should be transparent")
            var opaque = 0
            for y in 0..<picture.height { for x in 0..<picture.width where plane.row(y)[4 * x + 3] == 255 { opaque += 1 } }
            XCTAssertGreaterThan(opaque, picture.width * picture.height / 20, "\(art): too little is drawn")
        }
        let portrait = try XCTUnwrap(Effects.read(TestMedia.path("astronaut.png")).first)
        let face = try XCTUnwrap(Effects.mediaPipeFaces([portrait]).short[0].first)
        for art in StickerArt.allCases {
            let output = Effects.rgb(try Effects.apply("face-sticker:sticker=\(art.rawValue)", to: portrait))
            let input = Effects.rgb(portrait)
            var changedX = 0.0, changedY = 0.0, changed = 0.0
            for i in stride(from: 0, to: input.count, by: 3) where input[i..<(i + 3)] != output[i..<(i + 3)] {
                changedX += Double((i / 3) % portrait.width); changedY += Double((i / 3) / portrait.width); changed += 1
            }
            XCTAssertGreaterThan(changed, 100, "\(art)")
            let cx = changedX / changed / Double(portrait.width), cy = changedY / changed / Double(portrait.height)
            XCTAssertTrue(abs(cx - (face.box.x + face.box.width / 2)) < face.box.width * 0.5
                          && abs(cy - (face.box.y + face.box.height / 2)) < face.box.height, "\(art) at \(cx), \(cy)")
        }
    }
}
