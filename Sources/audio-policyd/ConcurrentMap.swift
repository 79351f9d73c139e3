import Dispatch
import Synchronization

extension Array where Element: Sendable {
    /// `map` on every core, keeping the order: for independent, pure work such as loading and
    /// replaying fixtures.
    func concurrentMap<Result: Sendable>(_ transform: @Sendable (Element) -> Result) -> [Result] {
        let slots = Mutex<[Result?]>(Array<Result?>(repeating: nil, count: count))
        withoutActuallyEscaping(transform) { transform in
            let items = self
            DispatchQueue.concurrentPerform(iterations: items.count) { index in
                let result = transform(items[index])
                slots.withLock { $0[index] = result }
            }
        }
        return slots.withLock { $0.compactMap { $0 } }
    }
}
