import VFXCore

/// A run whose per-plane transforms at its start and end (`FusedColorProcessor.planarEnds`) go around a core that
/// `FixedPointRunKernel` cannot take (a steep curve, a 3D table…): the head's per-plane pass, the core's kernel and the
/// tail's per-plane pass, band by band so that a band's planes stay in cache from one to the next.
///
/// ```swift
/// // hue:angle=40,gamma:power=0.5 → the hue per plane, then the steep gamma in R'G'B'
/// let kernel = PlanarEndsKernel(head: hue, core: gammaKernel, tail: nil)
/// kernel.apply(to: frame.planes, width: 1920, height: 1080, slices: slices)
/// ```
final class PlanarEndsKernel: ColorKernel {
    let head: PlanarYUVKernel?, core: any ColorKernel, tail: PlanarYUVKernel?

    init(head: PlanarYUVKernel?, core: any ColorKernel, tail: PlanarYUVKernel?) {
        (self.head, self.core, self.tail) = (head, core, tail)
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        let bandRows = FusedColorProcessor.bandRows
        let bands = (height + bandRows - 1) / bandRows
        let (head, core, tail) = (self.head, self.core, self.tail)
        slices.run(rows: bands) { range in
            for band in range {
                let rows = (band * bandRows)..<min(height, (band + 1) * bandRows)
                let parts = FusedColorProcessor.band(of: planes, rows: rows, subsampled: true)
                let one = SliceRunner(threads: 1)
                head?.apply(to: parts, width: width, height: rows.count, slices: one)
                core.apply(to: parts, width: width, height: rows.count, slices: one)
                tail?.apply(to: parts, width: width, height: rows.count, slices: one)
            }
        }
    }
}
