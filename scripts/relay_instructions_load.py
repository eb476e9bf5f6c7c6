"""Sequential keep-alive load for scripts/relay-instructions: N chat requests, each a new
turn (its own last user message), one-line or agent-shaped bodies of about SIZE bytes.
Usage: relay_instructions_load.py HOST:PORT PATH TOKEN N [stream|json] [SIZE]"""
import http.client, sys, json

hostport, path, token, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
stream = len(sys.argv) > 5 and sys.argv[5] == "stream"
size = int(sys.argv[6]) if len(sys.argv) > 6 else 0
host, port = hostport.rsplit(":", 1)
prefix = '{"model":"m1","stream":%s,' % ("true" if stream else "false")
if size:
    tools = []
    for i in range(min(25, max(1, size // 8192))):
        tools.append(json.dumps({"type": "function", "function": {"name": f"tool_{i}", "description": f"Tool {i}: reads files. " + "Usage notes. " * 8, "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}, separators=(",", ":")))
    prefix += '"tools":[' + ",".join(tools) + '],'
prefix += '"messages":['
if size:
    prefix += json.dumps({"role": "system", "content": "You are a CLI tool.\n" + "- Rule: prefer editing files; run tests.\n" * 40}, separators=(",", ":")) + ","
    turn = 0
    while len(prefix) + 200 < size:
        code = "".join(f'    let value_{l} = compute("{turn}", {l})?; // "quoted"\\path\ttab\n' for l in range(30))
        ex = [{"role": "user", "content": f"Please look at step {turn}."},
              {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{turn}", "type": "function", "function": {"name": "tool_1", "arguments": json.dumps({"path": f"src/s{turn}.rs"})}}]},
              {"role": "tool", "tool_call_id": f"call_{turn}", "content": f"fn g_{turn}() {{\n{code}}}\n"}]
        prefix += ",".join(json.dumps(e, separators=(",", ":")) for e in ex) + ","
        turn += 1
c = http.client.HTTPConnection(host, int(port))
for i in range(n):
    body = prefix + '{"role":"user","content":"w1 n%d"}]}' % i
    c.request("POST", path, body=body, headers={"authorization": "Bearer " + token, "content-type": "application/json"})
    r = c.getresponse(); r.read()
    if r.status != 200:
        print("status", r.status, r.read()[:200], file=sys.stderr); sys.exit(1)
