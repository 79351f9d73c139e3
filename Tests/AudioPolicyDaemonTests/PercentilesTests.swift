import AudioPolicyTools
import Testing

@Suite struct PercentilesTests {
    @Test func ranksAndSharesOfOneToAHundred() throws {
        let summary = try #require(Percentiles((1...100).reversed().map(Double.init)))
        #expect(summary.count == 100)
        #expect(summary.p50 == 51)
        #expect(summary.p90 == 91)
        #expect(summary.p99 == 100)
        #expect(summary.max == 100)
        #expect(summary.share(atMost: 0) == 0)
        #expect(summary.share(atMost: 20) == 0.2)
        #expect(summary.share(atMost: 20.5) == 0.2)
        #expect(summary.share(atMost: 100) == 1)
    }

    @Test func equalSamplesCountAsAtMost() throws {
        let summary = try #require(Percentiles([5, 5, 5, 7]))
        #expect(summary.share(atMost: 5) == 0.75)
        #expect(summary.share(atMost: 4.99) == 0)
    }

    @Test func noSamplesNoSummary() {
        #expect(Percentiles([]) == nil)
    }
}
