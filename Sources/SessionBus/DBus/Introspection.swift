/// The XML an object of ours answers `org.freedesktop.DBus.Introspectable.Introspect` with: the
/// document's header and the Introspectable interface every such object has, around its own
/// interfaces (the objects differ only there).
public enum Introspection {
    /// The whole document for an object whose own interfaces are `interfaces` (`<interface …>` elements).
    public static func document(_ interfaces: String) -> String {
        """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect"><arg name="xml" type="s" direction="out"/></method>
          </interface>
        \(interfaces)
        </node>
        """
    }
}
