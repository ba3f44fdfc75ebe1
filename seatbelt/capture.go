package seatbelt

// capture holds what a screen-capture process needs on macOS beyond the
// tier, each with its reason, and nothing broader: no network, no file
// access (the tier's RUN_TMP holds the output), no preference reads, no
// GPU user clients. Seed 003's draft profile granted process-exec with
// no-sandbox, all of /tmp, and IOFramebuffer access, which modern macOS no
// longer offers to capture clients; none of that is here.
func capture() section {
	return section{title: "capture", why: "screen capture: WindowServer, ScreenCaptureKit, TCC and IOSurface only", rules: []rule{
		{"every capture API (CGDisplayCreateImage, CGWindowListCreateImage, ScreenCaptureKit) gets its pixels from WindowServer through this service",
			allow(ops("mach-lookup"), globalNames("com.apple.windowserver.active")...)},
		{"ScreenCaptureKit streams are brokered by replayd",
			allow(ops("mach-lookup"), globalNames("com.apple.replayd")...)},
		{"the screen-recording permission (TCC) is checked with tccd; without it capture returns only the desktop background",
			allow(ops("mach-lookup"), globalNames("com.apple.tccd")...)},
		{"frames arrive as IOSurfaces (shared memory); mapping one needs the IOSurface user client",
			allow(ops("iokit-open"), filter("iokit-registry-entry-class", str("IOSurfaceRootUserClient")))},
	}}
}
