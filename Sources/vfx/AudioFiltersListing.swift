import Foundation
import VFXAudio
import VFXFilters

/// `vfx filters --json`: one array with the video filters (`"kind": "video"`) then the audio filters
/// (`"kind": "audio"`).
enum AudioFiltersListing {
    static func json(video: [FilterSpec], audio: [AudioFilterSpec]) throws -> String {
        let videoEntries = try JSONSerialization.jsonObject(with: Data(try FilterListing.json(video).utf8)) as? [Any] ?? []
        let audioEntries = try JSONSerialization.jsonObject(with: Data(try AudioFilterListing.json(audio).utf8)) as? [Any] ?? []
        let data = try JSONSerialization.data(withJSONObject: videoEntries + audioEntries,
                                              options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
