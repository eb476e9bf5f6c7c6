"""Quick store comparison (issue 31 part B): one debug `relay serve` on SQLite, then on Postgres,
300 sequential non-streaming requests each through a sealed store, p50/p90 and Postgres
transactions per request (pg_stat_database). Run: scripts/with-postgres python3
tests/relay-bench/store_compare.py TARGET_DIR (after cargo build -p switchyard-cli
-p switchyard-mock-provider). Not the release bench (scripts/bench-relay): a first look."""
import json, os, subprocess, sys, tempfile, time, http.client, statistics
T=sys.argv[1]; SW=f"{T}/debug/switchyard"; MOCK=f"{T}/debug/mock-provider"
N=int(os.environ.get("N","300"))
def start(cmd, env=None):
    p=subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    line=p.stdout.readline(); return p, line.strip().rsplit("http://",1)[1]
script=tempfile.NamedTemporaryFile("w",suffix=".json",delete=False)
json.dump({"keys":{"sk-bench-1":{"models":["m1"]}}},script); script.close()
mock,maddr=start([MOCK,"--script",script.name,"--no-record"])
def run(label, store):
    d=tempfile.mkdtemp(); key=os.path.join(d,"..", os.path.basename(d)+".key")
    open(key,"w").write(bytes(range(32)).hex()); os.chmod(key,0o600)
    env=dict(os.environ, SWITCHYARD_VAULT="sealed", SWITCHYARD_MASTER_KEY_FILE=key)
    env.pop("SWITCHYARD_TEST_PG",None)
    if store: env["SWITCHYARD_STORE"]=store
    sw=lambda *a, inp=None: subprocess.run([SW,"--data-dir",d,*a],input=inp,capture_output=True,text=True,env=env)
    r=sw("connection","add","c","--protocol","anthropic","--base-url",f"http://{maddr}","--model","m1","--secret-stdin",inp="sk-bench-1"); assert r.returncode==0, r.stderr
    tok=json.loads(sw("--json","relay","users","add","bob").stdout)["token"]
    relay,raddr=start([SW,"--data-dir",d,"relay","serve","--listen","127.0.0.1:0"],env)
    host,port=raddr.split(":"); c=http.client.HTTPConnection(host,int(port))
    body=json.dumps({"model":"m1","max_tokens":8,"messages":[{"role":"user","content":"hi"}]})
    def one():
        c.request("POST","/c/c/v1/messages",body,{"x-api-key":tok,"anthropic-version":"2023-06-01","content-type":"application/json"})
        r=c.getresponse(); r.read(); assert r.status==200, r.status
    for _ in range(30): one()
    x0=xacts(store)
    lat=[]
    for _ in range(N):
        t=time.perf_counter(); one(); lat.append((time.perf_counter()-t)*1e6)
    x1=xacts(store)
    relay.terminate(); relay.wait()
    lat.sort()
    print(f"| {label} | {N} | {statistics.median(lat):.0f} | {lat[int(N*0.9)]:.0f} | {'' if x0 is None else f'{(x1-x0)/N:.2f}'} |")
def xacts(store):
    if not store: return None
    out=subprocess.run(["psql",store,"-Atc","select xact_commit+xact_rollback from pg_stat_database where datname=current_database()"],capture_output=True,text=True).stdout
    time.sleep(0.6)  # pg_stat lag
    out=subprocess.run(["psql",store,"-Atc","select pg_stat_clear_snapshot(); select xact_commit+xact_rollback from pg_stat_database where datname=current_database()"],capture_output=True,text=True).stdout
    return int(out.split()[-1])
print("| store | requests | p50 µs | p90 µs | PG transactions / request |\n|---|---|---|---|---|")
run("SQLite (sealed)", None)
srv=os.environ["SWITCHYARD_TEST_PG"]; base=srv.rsplit("/",1)[0]
subprocess.run(["psql",srv,"-qc","create database bench"],check=True)
run("Postgres (sealed)", base+"/bench")
mock.terminate()
