#!/usr/bin/env python3
"""The small meshes of tests/data/mesh/, written by VTK's own writers (not by dcs), so that the
readers are tested on what real programs write:

    .venv-viewers/bin/python tests/data/mesh/make_meshes.py tests/data/mesh

- sphere_binary.ply, sphere_ascii.ply: vtkPLYWriter (binary little endian / ascii), with normals
- sphere.obj: vtkOBJWriter (v, vn, f i//n)
- sphere_51.vtk, sphere_51_binary.vtk: vtkPolyDataWriter, legacy 5.1 (OFFSETS/CONNECTIVITY)
- sphere_42.vtk, sphere_42_binary.vtk: the same in the 4.2 count form
- strips_42.vtk: vtkStripper's TRIANGLE_STRIPS, without normals
A sphere of radius 10 Å centred at (1, 2, 3): 8 x 6 resolution, 34 points, 64 triangles.
"""
import os
import sys

import vtk


def sphere(normals=True):
    source = vtk.vtkSphereSource()
    source.SetRadius(10.0)
    source.SetCenter(1.0, 2.0, 3.0)
    source.SetThetaResolution(8)
    source.SetPhiResolution(6)
    source.Update()
    poly = source.GetOutput()
    if not normals:
        poly.GetPointData().SetNormals(None)
    return poly


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, binary in (("sphere_binary.ply", True), ("sphere_ascii.ply", False)):
        writer = vtk.vtkPLYWriter()
        writer.SetFileName(os.path.join(out, name))
        writer.SetInputData(sphere())
        if binary:
            writer.SetFileTypeToBinary()
            writer.SetDataByteOrderToLittleEndian()
        else:
            writer.SetFileTypeToASCII()
        writer.Write()
    writer = vtk.vtkOBJWriter()
    writer.SetFileName(os.path.join(out, "sphere.obj"))
    writer.SetInputData(sphere())
    writer.Write()
    for name, version, binary in (("sphere_51.vtk", 51, False), ("sphere_51_binary.vtk", 51, True),
                                  ("sphere_42.vtk", 42, False), ("sphere_42_binary.vtk", 42, True)):
        writer = vtk.vtkPolyDataWriter()
        writer.SetFileName(os.path.join(out, name))
        writer.SetFileVersion(version)
        if binary:
            writer.SetFileTypeToBinary()
        writer.SetInputData(sphere())
        writer.Write()
    stripper = vtk.vtkStripper()
    stripper.SetInputData(sphere(normals=False))
    stripper.Update()
    writer = vtk.vtkPolyDataWriter()
    writer.SetFileName(os.path.join(out, "strips_42.vtk"))
    writer.SetFileVersion(42)
    writer.SetInputData(stripper.GetOutput())
    writer.Write()


if __name__ == "__main__":
    main()
