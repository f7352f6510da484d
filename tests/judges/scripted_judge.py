"""A `cmd:` judge for the tests: reads one judge_request line, answers as its arguments say.

    scripted_judge.py score N [COST]   -> {"output": "<JSON with score N>", "cost_usd": COST}
    scripted_judge.py plain N          -> the reply text itself, in prose
    scripted_judge.py fail             -> exit 3 with a message on stderr
    scripted_judge.py echo-file PATH   -> append the request to PATH, then answer score 4
"""

import json
import sys

request = json.loads(sys.stdin.readline())
assert request["type"] == "judge_request" and request["system"] and request["prompt"], request
mode = sys.argv[1]
if mode == "score":
    reply = {"output": json.dumps({"reasoning": "read it", "score": int(sys.argv[2]), "reason": "cmd judge"})}
    if len(sys.argv) > 3:
        reply["cost_usd"] = float(sys.argv[3])
    print(json.dumps(reply))
elif mode == "plain":
    print(f'Verdict follows.\n```json\n{{"score": "{sys.argv[2]}", "reason": "plain"}}\n```')
elif mode == "fail":
    print("the judge model is not loaded", file=sys.stderr)
    sys.exit(3)
elif mode == "echo-file":
    with open(sys.argv[2], "a", encoding="utf-8") as f:
        f.write(json.dumps(request, ensure_ascii=False) + "\n")
    print(json.dumps({"output": json.dumps({"score": 4, "reason": "echo"})}))
