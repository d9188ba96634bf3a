"""Runs a notebook with nbclient (Debian's python3-nbclient) and prints one
JSON report of its cells' execution counts and outputs.

Usage: python3 nbclient_run.py gateway|local|report NOTEBOOK OUT
  gateway: the kernel comes from Jupyter Server's GatewayKernelManager,
           pointed at the gateway by JUPYTER_GATEWAY_URL (Paddock);
  local:   a kernel on this machine (ipykernel), to compare with;
  report:  run nothing: report on NOTEBOOK as it is (one another tool ran).
A cell whose metadata has "timeout_s" gets that timeout (the others 300 s,
a safety net); a cell that outlives it is interrupted, as
interrupt_on_timeout does, and the notebook goes on. Errors are allowed.
The executed notebook is written to OUT.
"""

import json
import sys

import nbformat
from nbclient import NotebookClient


def report(nb):
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outs = []
        for o in cell.outputs:
            out = {"type": o.output_type}
            if o.output_type == "stream":
                out.update(name=o.name, text=o.text)
            elif o.output_type in ("execute_result", "display_data"):
                out.update(mimes=sorted(o.data), plain=o.data.get("text/plain"), html=o.data.get("text/html"))
                if o.output_type == "execute_result":
                    out["count"] = o.execution_count
            elif o.output_type == "error":
                out.update(ename=o.ename, evalue=o.evalue, traceback=len(o.traceback) > 0)
            outs.append(out)
        cells.append({"count": cell.execution_count, "outputs": outs})
    return cells


def main():
    mode, path, out = sys.argv[1:4]
    nb = nbformat.read(path, as_version=4)
    if mode == "report":
        print(json.dumps({"kernel": nb.metadata.get("language_info", {}).get("name"), "cells": report(nb)}))
        return
    kwargs, start = {}, {}
    if mode == "gateway":
        from jupyter_server.gateway.managers import GatewayKernelManager

        kwargs["kernel_manager_class"] = GatewayKernelManager
        # Jupyter Server 1.23's GatewayKernelManager asks the gateway for
        # the kernel named in start_kernel's arguments (python3 without
        # one), not for its own kernel_name: nbclient passes execute's on.
        start["kernel_name"] = nb.metadata.kernelspec.name
    client = NotebookClient(
        nb,
        timeout_func=lambda cell: cell.metadata.get("timeout_s", 300),
        interrupt_on_timeout=True,
        allow_errors=True,
        kernel_name=nb.metadata.kernelspec.name,
        **kwargs,
    )
    client.execute(**start)
    nbformat.write(nb, out)
    print(json.dumps({"kernel": nb.metadata.get("language_info", {}).get("name"), "cells": report(nb)}))


if __name__ == "__main__":
    main()
