import Foundation
import VFXTestSupport
import Testing
import VFXCore
import VFXPipeline
@testable import VFXMedia

/// The reader and writer in the offline runner: decoding and encoding on different threads, the audio
/// packets crossing from the reader's thread to the writer's through the track's queue.
@Suite struct MediaPipelineTests {
    @Test func runnerKeepsFramesAndAudio() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = try MediaWriterTests.smallClipWithAudio(in: folder)
        let reader = try MediaReader(path: source)
        let runner = OfflineRunner(source: reader, processor: nil)
        let format = try runner.prepare()
        let output = folder.path("threaded.mp4")
        let writer = try MediaWriter(path: output, frameRate: format.frameRate, audioFrom: reader)
        _ = try runner.run(into: writer)
        #expect(writer.framesWritten == 132)
        #expect(try Tool.probe(output, stream: "v:0")["nb_read_packets"] == "132")
        #expect(try Tool.probe(output, stream: "a:0")["nb_read_packets"] == (try Tool.probe(source, stream: "a:0"))["nb_read_packets"])
        #expect(abs((try Tool.rawAudioSeconds(output)) - (try Tool.rawAudioSeconds(source))) < 1e-3)
    }

    /// A file that breaks mid-stream stops the run with the reader's error; the writer leaves nothing.
    @Test func brokenInputLeavesNothing() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let y4m = try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("carphone_pristine.mp4"), "-frames:v", "10",
                                          "-f", "yuv4mpegpipe", "-"])
        let input = folder.path("cut.y4m")
        try y4m.prefix(y4m.count - 1000).write(to: URL(fileURLWithPath: input))
        let reader = try MediaReader(path: input)
        let runner = OfflineRunner(source: reader, processor: nil)
        let writer = try MediaWriter(path: folder.path("out.mp4"), frameRate: try runner.prepare().frameRate, audioFrom: reader)
        #expect(throws: MediaError.self) { try runner.run(into: writer) }
        #expect(folder.contents == ["cut.y4m"])
    }
}
