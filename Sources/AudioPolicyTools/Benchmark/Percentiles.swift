import FoundationGaps

/// Summary statistics of a set of measurements.
public struct Percentiles: Sendable, CustomStringConvertible {
    public let count: Int
    public let p50: Double
    public let p90: Double
    public let p99: Double
    public let max: Double
    private let sorted: [Double]

    public init?(_ samples: [Double]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        func at(_ q: Double) -> Double { sorted[Swift.min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded(.up)))] }
        count = sorted.count
        p50 = at(0.5)
        p90 = at(0.9)
        p99 = at(0.99)
        max = sorted[sorted.count - 1]
        self.sorted = sorted
    }

    /// The share of samples at or below `limit`, 0…1.
    public func share(atMost limit: Double) -> Double {
        var low = 0, high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] <= limit { low = middle + 1 } else { high = middle }
        }
        return Double(low) / Double(sorted.count)
    }

    public var description: String {
        func f(_ v: Double) -> String { v < 10 ? String(printf: "%.2f", v) : String(printf: "%.0f", v) }
        return "p50 \(f(p50)), p90 \(f(p90)), p99 \(f(p99)), max \(f(max)) (n=\(count))"
    }
}
