// outcome.mjs: pi's results in the shape pi-sbx-backend gives them, with the outcome it
// adds as data (_meta): "pi-sbx/thrown" for what pi's tool threw, "pi-sbx/exitCode" for
// a bash result pi returned. pi states the exit code only in its text ("Command exited
// with code N", nothing for 0); reading it from there is the point: ours must agree.

/** A result pi's tool returned. */
export function returned(tool, r) {
	const out = { content: r.content, details: r.details ?? null, isError: r.isError === true };
	if (tool === "bash") {
		const text = r.content.find((c) => c.type === "text")?.text ?? "";
		const m = /(?:^|\n\n)Command exited with code (\d+)$/.exec(text);
		out._meta = { "pi-sbx/exitCode": m ? Number(m[1]) : 0 };
	}
	return out;
}

/** What pi's agent loop shows the model for a tool that threw err. */
export function thrown(err) {
	return {
		_meta: { "pi-sbx/thrown": true },
		content: [{ type: "text", text: err instanceof Error ? err.message : String(err) }],
		details: {},
		isError: true,
	};
}
