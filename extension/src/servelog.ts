// What the status line shows of a line serve writes on stderr.

/**
 * What a line of serve's stderr says, for the status line: sbx's progress as it is; of a
 * log record (`time=… level=… msg=… error=…`) its error when it has one (the reason, not
 * "tool call failed"), else its msg.
 */
export function serveLogText(line: string): string {
	if (!line.startsWith("time=")) return line;
	const attr = (name: string) => {
		const m = new RegExp(String.raw`(?:^| )${name}=(?:"((?:[^"\\]|\\.)*)"|(\S+))`).exec(line);
		if (!m) return undefined;
		return m[1] !== undefined ? m[1].replace(/\\n/g, " ").replace(/\\(.)/g, "$1") : m[2];
	};
	return attr("error") ?? attr("msg") ?? line;
}
