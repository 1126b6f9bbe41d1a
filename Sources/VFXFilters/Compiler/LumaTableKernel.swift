import VFXCore

/// Luma through a 256-entry table (or left alone) and, for runs that remove chroma, chroma set to neutral
/// (128). Used for gray frames and for YUV runs that only bend luma or remove chroma (`mono`, `brightness`,
/// `threshold`): chroma planes are never read.
///
/// ```swift
/// let mono = LumaTableKernel(map: nil, fillsChroma: true, chromaInterleaved: false)
/// mono.apply(to: frame.planes, width: 1280, height: 720, slices: SliceRunner(threads: 1))
/// ```
final class LumaTableKernel: ColorKernel {
    private let map: UnsafeMutablePointer<UInt8>?
    let fillsChroma: Bool
    let chromaInterleaved: Bool

    init(map: [UInt8]?, fillsChroma: Bool, chromaInterleaved: Bool) {
        if let map {
            let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
            table.initialize(from: map, count: 256)
            self.map = table
        } else {
            self.map = nil
        }
        self.fillsChroma = fillsChroma
        self.chromaInterleaved = chromaInterleaved
    }

    deinit { map?.deallocate() }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        if let map {
            let luma = planes[0]
            slices.run(rows: luma.height) { rows in
                for y in rows {
                    let row = luma.row(y)
                    for x in 0..<width { row[x] = map[Int(row[x])] }
                }
            }
        }
        guard fillsChroma else { return }
        for plane in planes.dropFirst() {
            slices.run(rows: plane.height) { rows in
                for y in rows { plane.row(y).update(repeating: 128, count: plane.width * plane.bytesPerPixel) }
            }
        }
    }
}
