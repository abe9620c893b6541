"""The Temporal benchmarks written by hand with Temporal's Python SDK, for comparison with
the same workflows run by `atomic worker` (benches/temporal/run.sh runs both on one dev
server). Each agent step is an activity returning its prompt (W5: after 50 ms), as atomic's
`in-process` adapter does.

    python hand_written.py ADDRESS w1|w3|w5|w1-local|w3-local|w5-local [--workers N]

`w1-local`, `w3-local` and `w5-local` are the same workflows with each step a local activity,
as atomic runs a call to its `in-process` provider (one that only computes inside the worker).

Prints the wall time from start to result, in milliseconds. With `--workers N`, N - 1 more
worker processes poll the same task queue (`hand_written.py ADDRESS worker QUEUE`).
"""

import asyncio
import os
import sys
import time
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker

TIMEOUT = timedelta(minutes=10)


@activity.defn
async def agent(prompt: str) -> str:
    return prompt


@activity.defn
async def slow_agent(prompt: str) -> str:
    await asyncio.sleep(0.05)
    return prompt


async def step(activity_fn, prompt: str, local: bool) -> str:
    """One agent step: an activity, or a local activity (as atomic runs `in-process`)."""
    if local:
        return await workflow.execute_local_activity(
            activity_fn, prompt, start_to_close_timeout=TIMEOUT
        )
    return await workflow.execute_activity(activity_fn, prompt, start_to_close_timeout=TIMEOUT)


@workflow.defn
class Chain:
    """W1: 1,000 agent steps, one after another."""

    @workflow.run
    async def run(self, size: int, local: bool) -> int:
        done = 0
        for i in range(size):
            await step(agent, f"step {i}", local)
            done += 1
        return done


@workflow.defn
class Loop:
    """W3: a loop of an agent step and a state update, 1,000 rounds."""

    @workflow.run
    async def run(self, size: int, local: bool) -> int:
        n = 0
        while n < size:
            await step(agent, f"round {n}", local)
            n += 1
        return n


@workflow.defn
class Fan:
    """W5: 200 agent steps of 50 ms, at most 16 at a time."""

    @workflow.run
    async def run(self, size: int, local: bool) -> int:
        gate = asyncio.Semaphore(16)

        async def one(i: int) -> str:
            async with gate:
                return await step(slow_agent, f"item {i}", local)

        results = await asyncio.gather(*(one(i) for i in range(size)))
        return len(results)


# case: (workflow, size, local activities)
CASES = {
    "w1": (Chain, 1000, False),
    "w3": (Loop, 1000, False),
    "w5": (Fan, 200, False),
    "w1-local": (Chain, 1000, True),
    "w3-local": (Loop, 1000, True),
    "w5-local": (Fan, 200, True),
}


def worker(client: Client, queue: str) -> Worker:
    return Worker(
        client,
        task_queue=queue,
        workflows=[Chain, Loop, Fan],
        activities=[agent, slow_agent],
        max_concurrent_activities=100,
    )


async def main() -> None:
    address, case = sys.argv[1], sys.argv[2]
    client = await Client.connect(address)
    if case == "worker":
        await worker(client, sys.argv[3]).run()
        return
    workers = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--workers" else 1
    flow, size, local = CASES[case]
    queue = f"py-{case}-{time.time_ns()}"
    extra = [
        await asyncio.create_subprocess_exec(sys.executable, __file__, address, "worker", queue)
        for _ in range(workers - 1)
    ]
    async with worker(client, queue):
        # Let the other workers start polling.
        await asyncio.sleep(2 if extra else 0)
        begin = time.perf_counter()
        await client.execute_workflow(
            flow.run, args=[size, local], id=queue, task_queue=queue
        )
        print(f"{(time.perf_counter() - begin) * 1000:.0f}")
    for process in extra:
        process.kill()
        await process.wait()


if __name__ == "__main__":
    asyncio.run(main())
    sys.stdout.flush()
    # The SDK's native core can abort while the interpreter finalizes (seen with 1.35.0);
    # the measurement is printed, so leave without finalizing.
    os._exit(0)
