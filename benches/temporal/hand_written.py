"""The Temporal benchmarks written by hand with Temporal's Python SDK, for comparison with
the same workflows run by `atomic worker` (benches/temporal/run.sh runs both on one dev
server). Each agent step is an activity returning its prompt (W5: after 50 ms), as atomic's
`in-process` adapter does.

    python hand_written.py ADDRESS w1|w3|w5 [--workers N]

Prints the wall time from start to result, in milliseconds.
"""

import asyncio
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


@workflow.defn
class Chain:
    """W1: 1,000 agent steps, one after another."""

    @workflow.run
    async def run(self, steps: int) -> int:
        done = 0
        for i in range(steps):
            await workflow.execute_activity(agent, f"step {i}", start_to_close_timeout=TIMEOUT)
            done += 1
        return done


@workflow.defn
class Loop:
    """W3: a loop of an agent step and a state update, 1,000 rounds."""

    @workflow.run
    async def run(self, rounds: int) -> int:
        n = 0
        while n < rounds:
            await workflow.execute_activity(agent, f"round {n}", start_to_close_timeout=TIMEOUT)
            n += 1
        return n


@workflow.defn
class Fan:
    """W5: 200 agent steps of 50 ms, at most 16 at a time."""

    @workflow.run
    async def run(self, items: int) -> int:
        gate = asyncio.Semaphore(16)

        async def one(i: int) -> str:
            async with gate:
                return await workflow.execute_activity(
                    slow_agent, f"item {i}", start_to_close_timeout=TIMEOUT
                )

        results = await asyncio.gather(*(one(i) for i in range(items)))
        return len(results)


CASES = {"w1": (Chain, 1000), "w3": (Loop, 1000), "w5": (Fan, 200)}


async def main() -> None:
    address, case = sys.argv[1], sys.argv[2]
    workers = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--workers" else 1
    flow, size = CASES[case]
    client = await Client.connect(address)
    queue = f"py-{case}-{time.time_ns()}"
    started = [
        Worker(
            client,
            task_queue=queue,
            workflows=[Chain, Loop, Fan],
            activities=[agent, slow_agent],
            max_concurrent_activities=100,
        )
        for _ in range(workers)
    ]
    async with started[0]:
        for extra in started[1:]:
            asyncio.get_running_loop().create_task(extra.run())
        begin = time.perf_counter()
        await client.execute_workflow(flow.run, size, id=queue, task_queue=queue)
        print(f"{(time.perf_counter() - begin) * 1000:.0f}")
        for extra in started[1:]:
            await extra.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
